/**
 * `ops show KEY`: everything an operator needs before deciding on one action — what it was meant to
 * do, what was sent, what reconciliation found and who moved it where, in order.
 */
import { z } from 'zod';
import type { ActionSnapshot } from '../../messages/action';
import { actionKeyArg, expectPositionals, jsonSwitch, parseArgv, validateArgs } from './args';
import type { OpsCommand } from './context';
import { EXIT, OpsError } from './errors';
import { renderFields, renderTable } from './table';

const FLAGS = { json: { type: 'boolean' } } as const;

export const ShowArgs = z.object({ KEY: actionKeyArg, json: jsonSwitch });

export function parseShowArgs(argv: readonly string[]): { help: true } | ({ help: false } & z.output<typeof ShowArgs>) {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help };
  return { help, ...validateArgs(ShowArgs, { ...flags, ...expectPositionals(positionals, ['KEY']) }) };
}

export function renderAction(a: ActionSnapshot): string {
  const blocks = [
    renderFields([
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
      ['sends', `${a.sends} request(s) sent to the provider over ${a.dispatches} dispatch(es)`],
    ]),
    'Reconciliation checks:\n' +
      (a.checks.length === 0
        ? '  (none)'
        : indent(
            renderTable(
              [
                { header: 'at', value: (c) => c.at },
                { header: 'kind', value: (c) => c.kind },
                { header: 'found', value: (c) => (c.found ? 'yes' : 'no') },
                { header: 'trustworthy', value: (c) => (c.trustworthy ? 'yes' : 'no') },
                { header: 'detail', value: (c) => c.detail ?? '-' },
              ],
              a.checks,
            ),
          )),
    ...(a.conflicts?.length
      ? [
          'Conflicts (provider events that disagree with the action or each other; a person decides):\n' +
            indent(
              renderTable(
                [
                  { header: 'at', value: (c) => c.at },
                  { header: 'event', value: (c) => `${c.type} ${c.eventId}` },
                  { header: 'says', value: (c) => `${c.outcome}${c.providerRef ? ` ${c.providerRef}` : ''}` },
                  { header: 'conflict', value: (c) => c.reason },
                ],
                a.conflicts,
              ),
            ),
        ]
      : []),
    'Audit trail:\n' +
      indent(
        renderTable(
          [
            { header: 'at', value: (e) => e.at },
            { header: 'from → to', value: (e) => `${e.from ?? '∅'} → ${e.to}` },
            { header: 'reason', value: (e) => e.reason },
            { header: 'by', value: (e) => e.by ?? '-' },
          ],
          a.audit,
        ),
      ),
  ];
  return blocks.join('\n\n');
}

const USAGE = `Usage: npm run ops -- show KEY [--json]

One action in full: status, summary, request hash, owner and claimants, provider reference, error,
requests sent, every reconciliation check, provider events that conflict with the outcome, and the audit trail.

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
    ctx.out(args.json ? JSON.stringify(action, null, 2) : renderAction(action));
  },
};

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
