import { z } from 'zod';
import { parseArgv, validateArgs, type FlagSpecs } from '../../cli/ops/args';
import { UsageError } from '../../cli/ops/errors';

/** `npm run bench -- [--iterations N] [--concurrency K] [--repeats R] [--warmup W] [--recoveries R] [--json]` */
export const BENCH_FLAGS: FlagSpecs = {
  iterations: { type: 'string' },
  repeats: { type: 'string' },
  concurrency: { type: 'string' },
  warmup: { type: 'string' },
  recoveries: { type: 'string' },
  legs: { type: 'string' },
  observe: { type: 'string' },
  json: { type: 'boolean' },
};

export const DEFAULT_ITERATIONS = 50;
/** Rounds per leg and load level, interleaved with the other legs: a ratio is reported with its spread over them. */
export const DEFAULT_REPEATS = 3;
export const DEFAULT_BENCH_CONCURRENCY = 10;
export const DEFAULT_WARMUP = 3;
export const DEFAULT_RECOVERIES = 5;

/** A flag's whole number between min and max, its message naming what it counts. */
export const count = (what: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `must be ${what}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

export const BenchArgs = z.object({
  iterations: count('a whole number of operations per leg', 1, 100_000).default(DEFAULT_ITERATIONS),
  repeats: count('a whole number of rounds per leg', 1, 100).default(DEFAULT_REPEATS),
  concurrency: count('a whole number of operations in flight', 2, 200).default(DEFAULT_BENCH_CONCURRENCY),
  warmup: count('a whole number of untimed operations', 0, 1_000).default(DEFAULT_WARMUP),
  recoveries: count('a whole number of SIGKILL recoveries per side', 0, 100).default(DEFAULT_RECOVERIES),
  /** Only these legs (ids, comma-separated); every leg when absent. */
  legs: z
    .string()
    .regex(
      /^[a-z-]+(,[a-z-]+)*$/,
      'must be leg ids separated by commas, e.g. bare-activity,retrysafe-action',
    )
    .transform((s) => s.split(','))
    .optional(),
  observe: z.enum(['metrics', 'traces', 'both'], { error: 'must be metrics, traces or both' }).default('both'),
  json: z.boolean().default(false),
});
export type BenchArgs = z.output<typeof BenchArgs>;

export function parseBenchArgs(argv: readonly string[]): BenchArgs & { help: boolean } {
  const { flags, positionals, help } = parseArgv(argv, BENCH_FLAGS);
  if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  return { ...validateArgs(BenchArgs, flags), help };
}

export const BENCH_USAGE = `Usage: npm run bench -- [options]
  --iterations N   measured operations per leg, load level and round (default ${DEFAULT_ITERATIONS})
  --repeats R      rounds, every leg once per round in turn; ratios are taken per round and reported as the
                   median with the lowest and highest round (default ${DEFAULT_REPEATS})
  --concurrency K  the concurrent load level; sequential is always measured too (default ${DEFAULT_BENCH_CONCURRENCY})
  --warmup W       untimed operations per leg first (default ${DEFAULT_WARMUP})
  --recoveries R   SIGKILL → confirmed measurements per side (default ${DEFAULT_RECOVERIES})
  --observe W      what the observed leg's workers export: metrics, traces or both (default both)
  --legs A,B       only these legs, by id (for one comparison: bare-activity,retrysafe-action)
  --json           one JSON object on the last line of stdout; the table goes to stderr`;
