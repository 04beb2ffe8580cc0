/**
 * `ops history`: actions as the durable ledger holds them, including those whose workflows are long gone
 * (past the namespace's retention). The table is for reading; `--json` writes JSON Lines, one action per
 * line, for exports.
 */
import { z } from 'zod';
import type { LedgerRow } from '../../ledger';
import {
  durationArg,
  expectPositionals,
  jsonSwitch,
  limitArg,
  operationArg,
  parseArgv,
  statusesArg,
  tenantArg,
  validateArgs,
} from './args';
import { requireLedger, type OpsCommand } from './context';
import { renderTable } from './table';

export const DEFAULT_HISTORY_LIMIT = 100;
export const MAX_HISTORY_LIMIT = 100_000;

const FLAGS = {
  tenant: { type: 'string' },
  operation: { type: 'string' },
  since: { type: 'string' },
  status: { type: 'string', multiple: true },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const HistoryArgs = z.object({
  tenant: tenantArg.optional(),
  operation: operationArg.optional(),
  since: durationArg.optional(),
  status: statusesArg.optional(),
  limit: limitArg(MAX_HISTORY_LIMIT).optional(),
  json: jsonSwitch,
});

const USAGE = `Usage: retrysafe ops history [--tenant T] [--operation O] [--since 30d] [--status S] [--limit N] [--json]

Actions from the durable ledger (RETRYSAFE_LEDGER, or the .retrysafe/ledger.sqlite of \`retrysafe dev\`),
newest first, whether or not their workflows still exist.

  --tenant T      only this tenant
  --operation O   only this tool (charge, send-email, …)
  --since D       only actions claimed within D: 90s, 10m, 2h, 30d
  --status S      only these statuses (repeat or separate with commas)
  --limit N       at most N actions (default ${DEFAULT_HISTORY_LIMIT}, at most ${MAX_HISTORY_LIMIT})
  --json          JSON Lines: one action per line, for exports
  -h, --help      this text`;

export const historyCommand: OpsCommand = {
  name: 'history',
  summary: 'actions from the durable ledger, also past the workflows’ retention',
  usage: USAGE,
  async run(argv, ctx) {
    const { flags, positionals, help } = parseArgv(argv, FLAGS);
    if (help) return ctx.out(USAGE);
    expectPositionals(positionals, []);
    const args = validateArgs(HistoryArgs, flags);
    const ledger = await requireLedger(ctx);
    const rows = await ledger.history({
      ...(args.tenant ? { tenant: args.tenant } : {}),
      ...(args.operation ? { operation: args.operation } : {}),
      ...(args.since !== undefined ? { since: new Date(ctx.now().getTime() - args.since) } : {}),
      ...(args.status?.length ? { status: args.status } : {}),
      limit: args.limit ?? DEFAULT_HISTORY_LIMIT,
    });
    if (args.json) return ctx.out(rows.map((r) => JSON.stringify(r)).join('\n'));
    if (rows.length === 0) return ctx.out('no actions in the ledger match');
    ctx.out(
      renderTable<LedgerRow>(
        [
          { header: 'claimed', value: (r) => r.claimedAt },
          { header: 'key', value: (r) => r.key },
          { header: 'status', value: (r) => r.status },
          { header: 'outcome', value: (r) => r.outcome ?? '-', maxWidth: 60 },
          { header: 'settled', value: (r) => r.settledAt ?? '-' },
        ],
        rows,
      ),
    );
    ctx.out(
      `\n${rows.length} action(s)${rows.length === (args.limit ?? DEFAULT_HISTORY_LIMIT) ? ' (--limit reached)' : ''}`,
    );
  },
};
