/**
 * `ops approve KEY` and `ops reject KEY`: an operator's answer to an action awaiting confirmation. The
 * approval service signs it for the operator's token, bound to the action's key and the request hash of
 * the dry run shown (`ops show KEY`), and the action verifies all of it before it sends anything.
 * Arguments are checked (exit 2) and the operator authenticated (exit 3) before anything is sent.
 */
import { z } from 'zod';
import type { ApprovalOutcome } from '../../messages/approval';
import { actionKeyArg, durationArg, expectPositionals, jsonSwitch, parseArgv, validateArgs } from './args';
import type { ActionSnapshot } from '../../messages/action';
import type { OpsClient, OpsCommand, OpsContext } from './context';
import { EXIT, OpsError } from './errors';
import { OPERATOR_TOKEN_ENV, authenticateOperator, operatorTokenAndSource } from './operator-auth';
import { refusal } from './resolve';
import { APPROVAL_URL_ENV, DEFAULT_APPROVAL_URL } from './signatures';

/** How long `approve` follows the action to its outcome before it reports where it stands. */
export const DEFAULT_APPROVE_WAIT_MS = 60_000;

const FLAGS = {
  reason: { type: 'string' },
  'operator-token': { type: 'string' },
  hash: { type: 'string' },
  wait: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const ApproveArgs = z.object({
  KEY: actionKeyArg,
  reason: z
    .string({ error: 'must be text' })
    .trim()
    .min(3, 'must say why, in a few words, for the audit trail')
    .max(500, 'must be at most 500 characters')
    .optional(),
  'operator-token': z.string().optional(),
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: 'must be the 64 hex digits of the request hash that ops show printed' })
    .optional(),
  wait: durationArg.optional(),
  json: jsonSwitch,
});
export type ApproveArgs = z.output<typeof ApproveArgs>;

export function parseApproveArgs(argv: readonly string[]): { help: true } | ({ help: false } & ApproveArgs) {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help };
  return { help, ...validateArgs(ApproveArgs, { ...flags, ...expectPositionals(positionals, ['KEY']) }) };
}

function usage(decision: 'approve' | 'reject'): string {
  const effect =
    decision === 'approve'
      ? 'The action then sends its request, once, with its key; the command follows it to its outcome.'
      : 'The action then fails with nothing sent.';
  return `Usage: retrysafe ops ${decision} KEY [--reason TEXT] [--wait D] [--json]

${decision === 'approve' ? 'Approves' : 'Rejects'} an action awaiting confirmation: exactly the request its dry run shows
(\`retrysafe ops show KEY\`), bound to its request hash. ${effect}

  KEY                      the action key
  --reason TEXT            why, for the audit trail (quote it)
  --hash H                 the request hash you reviewed in \`ops show KEY\`; the action refuses the decision
                           if its request is another one (default: the hash its dry run shows now)
  --operator-token TOKEN   your operator token; prefer ${OPERATOR_TOKEN_ENV}. Without either, the local
                           operator's token that \`retrysafe dev\` keeps in .retrysafe/ is used
${decision === 'approve' ? `  --wait D                 how long to follow the action to its outcome (default ${DEFAULT_APPROVE_WAIT_MS / 1000}s)\n` : ''}  --json                   print { decision, approver, before, after } as JSON
  -h, --help               this text

The approval service at ${APPROVAL_URL_ENV} (default ${DEFAULT_APPROVAL_URL}) signs the decision for your
token's operator, within its tenants and the approver role. Exits 2 on bad arguments and 3 on a missing or
unknown token (nothing is sent in either case), 1 when there is no such action, it is not awaiting
confirmation, or it refuses the decision.`;
}

function approvalCommand(decision: 'approve' | 'reject'): OpsCommand {
  return {
    name: decision,
    summary:
      decision === 'approve'
        ? 'approve an action awaiting confirmation (signed, bound to its request hash)'
        : 'reject an action awaiting confirmation; nothing is sent',
    usage: usage(decision),
    async run(argv, ctx) {
      const args = parseApproveArgs(argv);
      if (args.help) return ctx.out(usage(decision));
      if (decision === 'reject' && args.wait !== undefined) {
        throw new OpsError('--wait: only applies to approve (a rejection is final at once)', EXIT.usage);
      }
      const operator = await authenticateOperator(ctx.env, args['operator-token']);
      const { token, source } = (await operatorTokenAndSource(ctx.env, args['operator-token']))!;
      const client = await ctx.client();

      const before = await client.getAction(args.KEY);
      if (!before) throw new OpsError(`no action with key ${args.KEY}`, EXIT.failed);
      if (before.status !== 'awaiting_confirmation') {
        throw new OpsError(
          `action ${args.KEY} is ${before.status}, not awaiting confirmation (nothing sent)` +
            (before.status === 'needs_review' ? '; a person resolves it with `ops resolve`' : ''),
          EXIT.failed,
        );
      }
      // With --hash, exactly the request the operator reviewed (ops show): the action refuses it if the request
      // differs; without, the one its dry run shows now.
      const requestHash = args.hash ?? before.dryRun?.requestHash ?? before.requestHash;
      const signed = await ctx.signatures.sign(
        token,
        {
          decision,
          key: args.KEY,
          requestHash,
          ...(args.reason ? { params: { reason: args.reason } } : {}),
        },
        { local: source === 'demo' },
      );
      let outcome: ApprovalOutcome;
      try {
        outcome = await client.approveAction(signed);
      } catch (err) {
        throw refusal(args.KEY, err);
      }
      if (outcome.decision !== decision) {
        // A second answer to an action that was already decided gets the first answer back: say so.
        throw new OpsError(
          `action ${args.KEY} was already ${outcome.decision === 'approve' ? 'approved' : 'rejected'} by ${outcome.approver}; yours changed nothing (it is ${outcome.status})`,
          EXIT.failed,
        );
      }
      const after =
        decision === 'approve'
          ? await follow(client, args.KEY, args.wait ?? DEFAULT_APPROVE_WAIT_MS)
          : await client.getAction(args.KEY);
      report(ctx, args, decision, operator.name, before.status, after?.status ?? outcome.status, after?.providerRef);
    },
  };
}

/** Statuses where an approved action stops moving by itself: an outcome, or a person's turn again. */
const SETTLED: readonly string[] = ['confirmed', 'failed', 'compensating', 'compensated', 'needs_review'];

/** Follows an approved action until it settles (or `timeoutMs` passes), and answers it as it stands then. */
async function follow(client: OpsClient, key: string, timeoutMs: number): Promise<ActionSnapshot | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await client.getAction(key);
    if (!now || SETTLED.includes(now.status) || Date.now() >= deadline) return now;
    await new Promise((r) => setTimeout(r, 300));
  }
}

function report(
  ctx: OpsContext,
  args: ApproveArgs,
  decision: 'approve' | 'reject',
  approver: string,
  before: string,
  after: string,
  providerRef: string | undefined,
): void {
  if (args.json) {
    return ctx.out(
      JSON.stringify({ key: args.KEY, decision, approver, before, after, providerRef: providerRef ?? null }, null, 2),
    );
  }
  const by = `${decision === 'approve' ? 'approved' : 'rejected'} by ${approver}${args.reason ? `: ${args.reason}` : ''}`;
  ctx.out(`action ${args.KEY}: ${before} → ${after} (${by})${providerRef ? `, provider ref ${providerRef}` : ''}`);
  if (decision === 'approve' && after === 'needs_review') {
    ctx.out(`it needs a person again; see why and how to decide with \`retrysafe ops show ${args.KEY}\``);
  } else if (decision === 'approve' && !SETTLED.includes(after)) {
    ctx.out(`it has not finished yet; follow it with \`retrysafe ops show ${args.KEY}\``);
  }
}

export const approveCommand = approvalCommand('approve');
export const rejectCommand = approvalCommand('reject');
