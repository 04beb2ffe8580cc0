/**
 * `npm run bench`: bare Temporal and retrysafe side by side on one dev server — an activity call and Temporal's
 * fastest shape (a local activity, started eagerly) vs an action, a signal vs a signed confirmation, sequential
 * and concurrent — plus recovery from SIGKILL.
 * Writes an SVG of the latency distributions to .out/bench/.
 */
import { BENCH_USAGE, parseBenchArgs } from './bench/args';
import { formatBench } from './bench/format';
import { benchJson, runBench } from './bench/run';
import { UsageError } from '../cli/ops/errors';

async function main(): Promise<number> {
  let args;
  try {
    args = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${BENCH_USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${BENCH_USAGE}\n`);
    return 0;
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const say = args.json ? progress : (line: string) => process.stdout.write(`${line}\n`);
  progress(
    `bench: ${args.repeats} round(s) of ${args.iterations} operations per leg, sequential and at concurrency ${args.concurrency}`,
  );
  const report = await runBench({ ...args, log: progress });
  for (const line of formatBench(report)) say(line);
  if (args.json) {
    process.stdout.write(`${benchJson(report)}\n`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
