/**
 * `ops alarms`: writes the durable ledger refused because the row said something else had happened (a write from
 * a workflow that does not hold the row, an audit entry that disagrees with the one recorded). Each is a question
 * for a person: which of the two is right. Newest first; `--json` writes JSON Lines.
 */
import { z } from 'zod';
import type { LedgerAlarm } from '../../ledger';
import { expectPositionals, jsonSwitch, limitArg, parseArgv, validateArgs } from './args';
import { requireLedger, type OpsCommand } from './context';
import { renderTable } from './table';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

const FLAGS = { key: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } } as const;

export const AlarmsArgs = z.object({
  key: z.string().min(1).optional(),
  limit: limitArg(MAX_LIMIT).optional(),
  json: jsonSwitch,
});

const USAGE = `Usage: retrysafe ops alarms [--key KEY] [--limit N] [--json]

What the durable ledger raised about a key's row, newest first:
  not-holder      a workflow or act that does not hold the key's row tried to record a status (refused)
  audit-conflict  an audit entry disagrees with the one already recorded under its sequence number (refused)
  abandoned       a run's act left the row unsettled and the run ended, and nothing holds its intent any more:
                  ask the provider, then settle it by hand

  --key KEY   only this action's
  --limit N   at most N (default ${DEFAULT_LIMIT})
  --json      JSON Lines: one alarm per line
  -h, --help  this text`;

export const alarmsCommand: OpsCommand = {
  name: 'alarms',
  summary: 'ledger writes refused because the ledger disagreed (each needs a person)',
  usage: USAGE,
  async run(argv, ctx) {
    const { flags, positionals, help } = parseArgv(argv, FLAGS);
    if (help) return ctx.out(USAGE);
    expectPositionals(positionals, []);
    const args = validateArgs(AlarmsArgs, flags);
    const ledger = await requireLedger(ctx);
    const alarms = await ledger.alarms({
      ...(args.key ? { key: args.key } : {}),
      limit: args.limit ?? DEFAULT_LIMIT,
    });
    if (args.json) return ctx.out(alarms.map((a) => JSON.stringify(a)).join('\n'));
    if (alarms.length === 0) return ctx.out('no ledger alarms');
    ctx.out(
      renderTable<LedgerAlarm>(
        [
          { header: 'at', value: (a) => a.at },
          { header: 'key', value: (a) => a.key },
          { header: 'kind', value: (a) => a.kind },
          { header: 'detail', value: (a) => a.detail, maxWidth: 90 },
        ],
        alarms,
      ),
    );
    ctx.out(`\n${alarms.length} alarm(s)`);
  },
};
