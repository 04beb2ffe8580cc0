/**
 * `npm run conformance -- --tool NAME`: probes a tool's provider against the tool's declared contract (one effect for
 * one key, a lookup that finds a commit within the declared lag and nothing for an unused key, final declines and
 * validation errors, a key kept for the declared horizon) and prints declared against observed.
 *   npm run conformance -- --tool all
 *   npm run conformance -- --tool stripe-charge --contract idempotency-key
 * Exit code 0 when every declaration held (a provider that cannot run here is skipped with a line saying so), 1 when
 * one did not, 2 for bad arguments.
 */
import { z } from 'zod';

import { parseArgv, validateArgs, type FlagSpecs } from '../cli/ops/args';
import { UsageError } from '../cli/ops/errors';
import { failedRows, formatReport, isContract, runConformance } from './conformance/run';
import { SUBJECTS } from './conformance/subjects';

const FLAGS: FlagSpecs = {
  tool: { type: 'string', multiple: true },
  contract: { type: 'string' },
  'horizon-budget': { type: 'string' },
  json: { type: 'boolean' },
};

const DEFAULT_HORIZON_BUDGET_S = 60;

const Args = z.object({
  tool: z
    .array(z.string())
    .transform((names) =>
      names
        .flatMap((n) => n.split(','))
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1, 'needs a tool name, or all')),
  contract: z.string().refine(isContract, 'must be one of idempotency-key, lookup, none, transactional').optional(),
  'horizon-budget': z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number of seconds')
    .transform(Number)
    .default(DEFAULT_HORIZON_BUDGET_S),
  json: z.boolean().default(false),
});

const USAGE = `Usage: npm run conformance -- --tool NAME [options]
  --tool NAME          repeatable; one of ${SUBJECTS.map((s) => s.tool).join(', ')}, or all
  --contract C         hold the provider to C instead of the tool's declared contract
                       (idempotency-key, lookup, none or transactional)
  --horizon-budget S   the longest a key-horizon probe may wait (default ${DEFAULT_HORIZON_BUDGET_S}); a longer
                       declared horizon is reported as not testable
  --json               one JSON object on the last line of stdout; the tables go to stderr`;

async function main(): Promise<number> {
  let args;
  try {
    const { flags, positionals, help } = parseArgv(process.argv.slice(2), FLAGS);
    if (help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    args = validateArgs(Args, { tool: [], ...flags });
    const reports = await runConformance({
      tools: args.tool,
      ...(args.contract && isContract(args.contract) ? { contract: args.contract } : {}),
      horizonBudgetMs: args['horizon-budget'] * 1000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const say = args.json ? (line: string) => process.stderr.write(`${line}\n`) : (line: string) => console.log(line);
    say('');
    for (const report of reports) say(`${formatReport(report)}\n`);
    const failed = failedRows(reports);
    const skipped = reports.filter((r) => r.unavailable).length;
    say(
      `conformance: ${reports.length - skipped} tool(s) probed, ${skipped} skipped, ` +
        `${failed} declaration(s) that did not hold`,
    );
    if (args.json) process.stdout.write(`${JSON.stringify({ reports, failed, skipped })}\n`);
    return failed === 0 ? 0 : 1;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
