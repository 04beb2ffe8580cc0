/**
 * `ops resolve KEY`: an authorized operator's decision on an action whose outcome the system could not
 * establish. Order matters: arguments are checked (exit 2) and the operator authenticated (exit 3)
 * before anything reaches Temporal, so a typo or a bad token never leaves a trace on the action.
 * The workflow has the last word on whether the action takes the decision now.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import { isFinal } from '../../policies/action-status';
import { errorCodeOf, errorDetailsOf, RetrysafeError } from '../../policies/errors';
import type { ActionSnapshot, OperatorResolution } from '../../messages/action';
import type { SignedDecision } from '../../policies/signed-decision';
import { actionKeyArg, durationArg, expectPositionals, jsonSwitch, parseArgv, validateArgs } from './args';
import type { OpsCommand, OpsContext } from './context';
import { EXIT, OpsError } from './errors';
import { APPROVAL_URL_ENV } from './signatures';
import {
  OPERATOR_TOKEN_ENV,
  OPERATORS_FILE_ENV,
  DEFAULT_OPERATORS_FILE,
  authenticateOperator,
  operatorTokenAndSource,
} from './operator-auth';

export const DECISIONS = [
  'confirmed',
  'not-happened',
  'failed',
  'compensate',
] as const satisfies readonly OperatorResolution['decision'][];
/**
 * A resolution sent while the action is still reconciling is applied only when it next waits for
 * review; past this the CLI stops waiting and says so rather than hang.
 */
export const DEFAULT_RESOLVE_WAIT_MS = 60_000;

const FLAGS = {
  decision: { type: 'string' },
  reason: { type: 'string' },
  'provider-ref': { type: 'string' },
  'operator-token': { type: 'string' },
  wait: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const ResolveArgs = z
  .object({
    KEY: actionKeyArg,
    decision: z.enum(DECISIONS, {
      error: (issue) =>
        issue.input === undefined
          ? `is required: one of ${DECISIONS.join(', ')}`
          : `must be one of ${DECISIONS.join(', ')}`,
    }),
    reason: z
      .string({
        error: (issue) =>
          issue.input === undefined ? 'is required: why you decided this, for the audit trail' : 'must be text',
      })
      .trim()
      .min(3, 'must say why, in a few words, for the audit trail')
      .max(500, 'must be at most 500 characters'),
    'provider-ref': z
      .string()
      .trim()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/,
        'must be the provider’s reference as shown by the provider (e.g. ch_123, msg_1)',
      )
      .optional(),
    'operator-token': z.string().optional(),
    wait: durationArg.optional(),
    json: jsonSwitch,
  })
  .superRefine((args, ctx) => {
    if (args.decision === 'confirmed' && !args['provider-ref']) {
      ctx.addIssue({
        code: 'custom',
        path: ['provider-ref'],
        message: 'is required with --decision confirmed: give the reference you saw at the provider (e.g. msg_1)',
      });
    }
    if (args.decision !== 'confirmed' && args['provider-ref']) {
      ctx.addIssue({
        code: 'custom',
        path: ['provider-ref'],
        message: 'only applies to --decision confirmed; it would not be recorded',
      });
    }
  });
export type ResolveArgs = z.output<typeof ResolveArgs>;

export function parseResolveArgs(argv: readonly string[]): { help: true } | ({ help: false } & ResolveArgs) {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help };
  return { help, ...validateArgs(ResolveArgs, { ...flags, ...expectPositionals(positionals, ['KEY']) }) };
}

const USAGE = `Usage: retrysafe ops resolve KEY --decision D --reason TEXT [--provider-ref REF]

Records an authorized operator's decision on an action in needs_review (or still unknown).

  KEY                      the action key
  --decision D             confirmed      the effect happened (needs --provider-ref)
                           not-happened   it did not; the action sends again with the same key
                           failed         give up on it; the action fails
                           compensate     undo it
  --reason TEXT            why, for the audit trail (quote it)
  --provider-ref REF       the provider's reference you saw (required with confirmed)
  --operator-token TOKEN   your operator token; prefer the ${OPERATOR_TOKEN_ENV} variable,
                           which other users cannot read in the process list
  --wait D                 how long to wait for the action to apply the decision (default ${DEFAULT_RESOLVE_WAIT_MS / 1000}s)
  --json                   print the action's snapshot after the decision as JSON
  -h, --help               this text

Operators are listed in ${OPERATORS_FILE_ENV} (default ${DEFAULT_OPERATORS_FILE}) by the SHA-256 of their
token; the name recorded on the action comes from that file. Create one with \`operators add NAME\`.
The decision is signed by the approval service at ${APPROVAL_URL_ENV} (\`retrysafe approvals serve\`) for
your token's operator, within its tenants and roles (resolve needs the resolver role); the action checks
the signature, the scope and the request hash again before it takes the decision.
Exits 2 on bad arguments and 3 on a missing or unknown token (nothing is sent in either case),
1 when there is no such action or the action refuses the decision.`;

export const resolveCommand: OpsCommand = {
  name: 'resolve',
  summary: 'record an authorized operator’s decision on an action in needs_review',
  usage: USAGE,
  async run(argv, ctx) {
    const args = parseResolveArgs(argv);
    if (args.help) return ctx.out(USAGE);
    const operator = await authenticateOperator(ctx.env, args['operator-token']);
    const { token, source } = (await operatorTokenAndSource(ctx.env, args['operator-token']))!;
    const client = await ctx.client();

    const before = await client.getAction(args.KEY);
    if (!before) throw new OpsError(`no action with key ${args.KEY}`, EXIT.failed);
    if (isFinal(before.status)) {
      // A finished action's workflow has closed and takes no more messages; say why instead of a gRPC error.
      throw new OpsError(
        `action ${args.KEY} is ${before.status} and finished; it takes no more resolutions (nothing sent)`,
        EXIT.failed,
      );
    }

    // The approval service signs the decision for this operator, bound to the action's key and request hash.
    const signed = await ctx.signatures.sign(
      token,
      {
        decision: 'resolve',
        key: args.KEY,
        requestHash: before.requestHash,
        params: {
          outcome: args.decision,
          reason: args.reason,
          ...(args['provider-ref'] ? { providerRef: args['provider-ref'] } : {}),
        },
      },
      { local: source === 'demo' },
    );
    const after = await sendResolution(ctx, args.KEY, signed, before, args.wait ?? DEFAULT_RESOLVE_WAIT_MS);
    if (args.json) return ctx.out(JSON.stringify(after, null, 2));
    ctx.out(
      `action ${args.KEY}: ${before.status} → ${after.status} (${args.decision} by ${operator.name}: ${args.reason})`,
    );
    if (args.decision === 'not-happened' && after.status === 'dispatching') {
      ctx.out(`the action is sending again with the same key; follow it with \`retrysafe ops show ${args.KEY}\``);
    }
  },
};

async function sendResolution(
  ctx: OpsContext,
  key: string,
  signed: SignedDecision,
  before: ActionSnapshot,
  waitMs: number,
): Promise<ActionSnapshot> {
  const client = await ctx.client();
  const sent = client.resolveAction(signed);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), waitMs);
  });
  try {
    const result = await Promise.race([sent, timedOut]);
    if (result === 'timeout') {
      // The update stays accepted in the action's history; a silent exit would leave the operator guessing.
      sent.catch(() => undefined);
      throw new OpsError(
        `action ${key} accepted the decision but has not applied it within ${Math.round(waitMs / 1000)}s ` +
          `(it was ${before.status}); check it with \`retrysafe ops show ${key}\``,
        EXIT.failed,
      );
    }
    return result;
  } catch (err) {
    if (err instanceof OpsError) throw err;
    throw refusal(key, err);
  } finally {
    clearTimeout(timer);
  }
}

/** Turns a failed update into one line that says who refused and why. */
export function refusal(key: string, err: unknown): OpsError {
  if (err instanceof WorkflowUpdateFailedError || err instanceof RetrysafeError) {
    const code = errorCodeOf(err);
    const reason = errorDetailsOf(err)?.reason;
    const message =
      err instanceof RetrysafeError ? err.message : ((err.cause as Error | undefined)?.message ?? err.message);
    const why = [code, typeof reason === 'string' ? reason : undefined].filter(Boolean).join(', ');
    return new OpsError(`action ${key} refused the decision${why ? ` (${why})` : ''}: ${message}`, EXIT.failed);
  }
  if (err instanceof WorkflowNotFoundError) {
    return new OpsError(
      `action ${key} finished before the decision arrived; it takes no more resolutions`,
      EXIT.failed,
    );
  }
  return new OpsError(
    `could not deliver the decision to action ${key}: ${(err as Error).message ?? String(err)}`,
    EXIT.failed,
  );
}
