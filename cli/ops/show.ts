/**
 * `ops show KEY`: everything an operator needs before deciding on one action — what it was meant to
 * do, what was sent, what reconciliation found and who moved it where, in order.
 */
import { z } from 'zod';
import type { LedgerAlarm } from '../../ledger';
import type { ActionSnapshot } from '../../messages/action';
import type { DryRun } from '../../messages/approval';
import { maskForDisplay } from '../approvals/page/display-masking';
import { actionKeyArg, expectPositionals, jsonSwitch, parseArgv, validateArgs } from './args';
import type { OpsCommand } from './context';
import { EXIT, OpsError } from './errors';
import { withReadableHolders } from './holders';
import { renderFields, renderTable, type Column } from './table';

const FLAGS = { json: { type: 'boolean' } } as const;

export const ShowArgs = z.object({ KEY: actionKeyArg, json: jsonSwitch });

export function parseShowArgs(argv: readonly string[]): { help: true } | ({ help: false } & z.output<typeof ShowArgs>) {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help };
  return { help, ...validateArgs(ShowArgs, { ...flags, ...expectPositionals(positionals, ['KEY']) }) };
}

export function renderAction(a: ActionSnapshot, alarms: readonly LedgerAlarm[] = []): string {
  const blocks = [
    renderOverview(a),
    ...(a.dryRun ? [renderDryRun(a.dryRun)] : []),
    renderRequests(a),
    renderChecks(a),
    ...(a.conflicts?.length ? [renderConflicts(a.conflicts)] : []),
    renderAuditTrail(a),
    ...(alarms.length ? [renderAlarms(alarms)] : []),
    ...nextSteps(a),
  ];
  return blocks.join('\n\n');
}

/** What the action is, where it stands, and how many requests reached or may have reached the provider. */
function renderOverview(a: ActionSnapshot): string {
  return renderFields([
    ['key', a.key],
    ['status', a.status],
    ['summary', a.summary],
    ['operation', a.operation],
    ['tenant', a.tenant],
    ['request hash', a.requestHash],
    ['owner', a.owner],
    ['claimants', a.claimants.join(', ')],
    ['provider ref', a.providerRef],
    ['error', a.error ? `${a.error.code}: ${a.error.message}` : undefined],
    ['sends', sendsLine(a)],
  ]);
}

/**
 * The requests sent, never fewer than may have reached the provider: those recorded, and those an attempt that died
 * past `dispatching` may have made without a record (`unrecordedSends`), counted apart.
 */
export function sendsLine(a: Pick<ActionSnapshot, 'sends' | 'dispatches' | 'unrecordedSends'>): string {
  const over = `over ${a.dispatches} dispatch(es)`;
  const unrecorded = a.unrecordedSends ?? 0;
  if (unrecorded === 0) return `${a.sends} request(s) sent to the provider ${over}`;
  return `up to ${a.sends + unrecorded} request(s) to the provider ${over}: ${a.sends} recorded; ${unrecordedLine(unrecorded)}`;
}

function unrecordedLine(n: number): string {
  return `${n} ${n === 1 ? 'request' : 'requests'} may have reached the provider, unrecorded`;
}

function renderRequests(a: ActionSnapshot): string {
  const heading = 'Provider requests (every attempt, with what the provider answered):';
  const recorded = a.requests?.length
    ? titledTable(
        heading,
        [
          { header: 'at', value: (r) => r.at },
          { header: 'dispatch', value: (r) => String(r.dispatch), align: 'right' },
          { header: 'attempt', value: (r) => String(r.attempt), align: 'right' },
          { header: 'kind', value: (r) => r.kind },
          { header: 'answer', value: (r) => r.answer, maxWidth: 100 },
        ],
        a.requests,
      )
    : `${heading}\n  (none recorded)`;
  if (!a.unrecordedSends) return recorded;
  const died = 'an attempt died past `dispatching` (see the audit trail) before it kept its request';
  return `${recorded}\n  and ${unrecordedLine(a.unrecordedSends)}: ${died}`;
}

function renderChecks(a: ActionSnapshot): string {
  if (a.checks.length === 0) return 'Reconciliation checks:\n  (none)';
  return titledTable(
    'Reconciliation checks:',
    [
      { header: 'at', value: (c) => c.at },
      { header: 'kind', value: (c) => c.kind },
      { header: 'found', value: (c) => (c.found ? 'yes' : 'no') },
      { header: 'trustworthy', value: (c) => (c.trustworthy ? 'yes' : 'no') },
      { header: 'detail', value: (c) => c.detail ?? '-' },
    ],
    a.checks,
  );
}

function renderConflicts(conflicts: NonNullable<ActionSnapshot['conflicts']>): string {
  return titledTable(
    'Conflicts (provider events that disagree with the action or each other; a person decides):',
    [
      { header: 'at', value: (c) => c.at },
      { header: 'event', value: (c) => `${c.type} ${c.eventId}` },
      { header: 'says', value: (c) => `${c.outcome}${c.providerRef ? ` ${c.providerRef}` : ''}` },
      { header: 'conflict', value: (c) => c.reason },
    ],
    conflicts,
  );
}

function renderAuditTrail(a: ActionSnapshot): string {
  return titledTable(
    'Audit trail:',
    [
      { header: 'at', value: (e) => e.at },
      { header: 'from → to', value: (e) => `${e.from ?? '∅'} → ${e.to}` },
      { header: 'reason', value: (e) => withReadableHolders(e.reason) },
      { header: 'by', value: (e) => e.by ?? '-' },
    ],
    a.audit,
  );
}

function renderAlarms(alarms: readonly LedgerAlarm[]): string {
  return titledTable(
    'Ledger alarms (writes the ledger refused because its row said otherwise; see ops alarms):',
    [
      { header: 'at', value: (x) => x.at },
      { header: 'kind', value: (x) => x.kind },
      { header: 'detail', value: (x) => x.detail },
    ],
    alarms,
  );
}

/** A heading and its table, indented under it. */
function titledTable<Row>(heading: string, columns: readonly Column<Row>[], rows: readonly Row[]): string {
  return `${heading}\n${indent(renderTable(columns, rows))}`;
}

/** The exact effect a person is asked to approve, and why the policy asked. */
function renderDryRun(d: DryRun): string {
  const amount =
    d.amountCents !== undefined ? `${(d.amountCents / 100).toFixed(2)} ${d.currency ?? ''}`.trim() : undefined;
  return (
    'Dry run (what approving sends; secrets masked):\n' +
    indent(
      renderFields([
        ['target', d.target],
        ['amount', amount],
        ['scope', d.scope],
        ['payload', JSON.stringify(maskForDisplay(d.payload))],
        ['policy', `${d.policy.mode} (${d.policy.rows.join(', ')})`],
        ['because', d.policy.reasons.join('; ') || undefined],
        ['request hash', d.requestHash],
      ]),
    )
  );
}

/** What a person can do about the action now, as commands to copy. */
export function nextSteps(a: ActionSnapshot): string[] {
  const key = a.key;
  const lines: string[] = [];
  switch (a.status) {
    case 'awaiting_confirmation':
      lines.push(
        `approve it (sends it once, with this key):  retrysafe ops approve ${key} --reason "…"`,
        `reject it (nothing is sent):               retrysafe ops reject ${key} --reason "…"`,
      );
      break;
    case 'unknown':
      // Resolutions are taken in needs_review only: reconciliation either settles it or hands it over.
      lines.push(
        'reconciliation is still asking the provider (lookups after its read lag, webhooks); nothing is sent blindly.',
        `it settles by itself, or moves to needs_review for a person: look again with retrysafe ops show ${key}`,
      );
      break;
    case 'needs_review':
      if (a.decisionMode === 'human-only') {
        // The agent may never perform it: a person does it, or decides it must not happen.
        lines.push(
          'the agent never performs this action; do it yourself, or decide it must not happen:',
          `  you did it:     retrysafe ops resolve ${key} --decision confirmed --provider-ref REF --reason "…"`,
          `  it must not:    retrysafe ops resolve ${key} --decision failed --reason "…"`,
        );
        break;
      }
      lines.push(
        'check the provider for this key first, then record what you found:',
        `  it happened:        retrysafe ops resolve ${key} --decision confirmed --provider-ref REF --reason "…"`,
        `  it did not happen:  retrysafe ops resolve ${key} --decision not-happened --reason "…"   (sends again, same key)`,
        `  give up:            retrysafe ops resolve ${key} --decision failed --reason "…"`,
        `  undo it:            retrysafe ops resolve ${key} --decision compensate --reason "…"`,
      );
      break;
    default:
      return [];
  }
  return [`How to decide:\n${indent(lines.join('\n'))}`];
}

const USAGE = `Usage: retrysafe ops show KEY [--json]

One action in full: status, summary, request hash, owner and claimants, provider reference, error,
the dry run a person approves, every request sent to the provider with its answer, every reconciliation
check, provider events that conflict with the outcome, the audit trail, and how to decide when it waits
for a person.

  KEY          the action key, e.g. charge:v1:acme:renewal-2026-08-28-01
  --json       print the action's snapshot as JSON
  -h, --help   this text

Exits 1 when no action has this key, 2 when KEY is malformed.`;

export const showCommand: OpsCommand = {
  name: 'show',
  summary: 'one action in full, with its reconciliation checks and audit trail',
  usage: USAGE,
  async run(argv, ctx) {
    const args = parseShowArgs(argv);
    if (args.help) return ctx.out(USAGE);
    const action = await (await ctx.client()).getAction(args.KEY);
    if (!action) throw new OpsError(`no action with key ${args.KEY}`, EXIT.failed);
    const alarms = (await (await ctx.ledger())?.alarms({ key: args.KEY })) ?? [];
    ctx.out(
      args.json
        ? JSON.stringify(alarms.length ? { ...action, ledgerAlarms: alarms } : action, null, 2)
        : renderAction(action, alarms),
    );
  },
};

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
