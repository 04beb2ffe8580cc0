/**
 * `ops waiting`: runs that are held by an interlock — a downstream step waiting for an upstream action
 * that is not confirmed yet (RetrysafeWaitingOn), with that action's current status.
 */
import { z } from 'zod';
import { expectPositionals, jsonSwitch, parseArgv, tenantArg, validateArgs } from './args';
import type { OpsCommand } from './context';
import { renderTable } from './table';

const FLAGS = { tenant: { type: 'string' }, json: { type: 'boolean' } } as const;
const WaitingArgs = z.object({ tenant: tenantArg.optional(), json: jsonSwitch });

const USAGE = `Usage: retrysafe ops waiting [--tenant T] [--json]

Runs waiting on an upstream action (an interlock), with the action they wait for and its status.`;

export const waitingCommand: OpsCommand = {
  name: 'waiting',
  summary: 'list runs held by an unresolved upstream action (interlocks)',
  usage: USAGE,
  async run(argv, ctx) {
    const { flags, positionals, help } = parseArgv(argv, FLAGS);
    if (help) return ctx.out(USAGE);
    expectPositionals(positionals, []);
    const args = validateArgs(WaitingArgs, flags);
    const client = await ctx.client();
    const runs = await client.listWaitingRuns({ tenant: args.tenant });
    const rows = await Promise.all(
      runs.map(async (r) => ({
        ...r,
        upstreamStatus: (await client.getAction(r.waitingOn).catch(() => undefined))?.status ?? '?',
      })),
    );
    if (args.json) return ctx.out(JSON.stringify(rows, null, 2));
    if (rows.length === 0) return ctx.out('no run is waiting on an upstream action');
    ctx.out(
      renderTable<(typeof rows)[number]>(
        [
          { header: 'run', value: (r) => r.workflowId },
          { header: 'run status', value: (r) => r.status },
          { header: 'waiting on', value: (r) => r.waitingOn },
          { header: 'upstream status', value: (r) => r.upstreamStatus },
        ],
        rows,
      ),
    );
  },
};
