import { z } from 'zod';
import { parseArgv, validateArgs, type FlagSpecs } from '../../../cli/ops/args';
import { UsageError } from '../../../cli/ops/errors';
import { count } from '../args';

/** `npm run bench:scale -- [--long-run N] [--concurrent N,N,…] [--rounds R] [--queue N] [--queue-steps S] [--json]` */
const FLAGS: FlagSpecs = {
  'long-run': { type: 'string' },
  concurrent: { type: 'string' },
  rounds: { type: 'string' },
  queue: { type: 'string' },
  'queue-steps': { type: 'string' },
  json: { type: 'boolean' },
};

export const DEFAULT_LONG_RUN = 100;
export const DEFAULT_CONCURRENT = [100, 300, 1000];
/** Two rounds, the second in the other order: neither side always meets the colder worker or the fuller server. */
export const DEFAULT_ROUNDS = 2;
export const DEFAULT_QUEUE = 10_000;
export const DEFAULT_QUEUE_STEPS = 4;

const sizes = z
  .string()
  .regex(/^[0-9]+(,[0-9]+)*$/, 'must be whole numbers separated by commas, e.g. 100,300,1000')
  .transform((s) => s.split(',').map(Number))
  .pipe(z.array(z.number().int().min(0, 'must be at least 0').max(5_000, 'must be at most 5000')));

export const ScaleArgs = z.object({
  'long-run': count('a whole number of actions in one run (0 skips it)', 0, 1_000).default(DEFAULT_LONG_RUN),
  concurrent: sizes.default(DEFAULT_CONCURRENT),
  rounds: count('a whole number of rounds of each burst size', 1, 10).default(DEFAULT_ROUNDS),
  queue: count('a whole number of actions awaiting confirmation (0 skips it)', 0, 50_000).default(DEFAULT_QUEUE),
  'queue-steps': count('a whole number of points to time ops queue at', 1, 20).default(DEFAULT_QUEUE_STEPS),
  json: z.boolean().default(false),
});
export type ScaleArgs = z.output<typeof ScaleArgs>;

export function parseScaleArgs(argv: readonly string[]): ScaleArgs & { help: boolean } {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  return { ...validateArgs(ScaleArgs, flags), help };
}

export const SCALE_USAGE = `Usage: npm run bench:scale -- [options]
  --long-run N      one run of N actions in turn: its history, and each action's time first to last
                    (default ${DEFAULT_LONG_RUN}; 0 skips it)
  --concurrent L    bursts of actions started at once on one worker, one burst per size in the list: p50, p99 and
                    the worker's memory (default ${DEFAULT_CONCURRENT.join(',')}; 0 skips it)
  --rounds R        bursts of each size per side, side by side: bare then retrysafe, then the other way round,
                    alternating; the ratio is taken over all of them (default ${DEFAULT_ROUNDS})
  --queue N         fills a tenant with N actions awaiting confirmation and times \`ops queue\` on the way
                    (default ${DEFAULT_QUEUE}; 0 skips it)
  --queue-steps S   the points \`ops queue\` is timed at, evenly spaced up to N (default ${DEFAULT_QUEUE_STEPS})
  --json            one JSON object on the last line of stdout; the table goes to stderr`;
