import { z } from 'zod';
import { parseArgv, validateArgs, type FlagSpecs } from '../../cli/ops/args';
import { UsageError } from '../../cli/ops/errors';
import { DEFAULT_SCENARIOS, SCENARIOS } from './registry';
import { DEFAULT_RESTART_RATE } from './plan';
import { FAULT_KINDS, parseFaultKinds, REFUSED, type FaultKind } from './faults';

/**
 * `npm run chaos -- [--crashes N] [--seed S] [--scenario NAME]… [--concurrency K] [--baseline]
 *                    [--target dev-server|cluster] [--restart-rate P] [--only I[,J-K…]] [--minutes M] [--json]`
 * Every message names the argument it is about (`--crashes: must be …`).
 */
export const CHAOS_FLAGS: FlagSpecs = {
  crashes: { type: 'string' },
  seed: { type: 'string' },
  scenario: { type: 'string', multiple: true },
  concurrency: { type: 'string' },
  baseline: { type: 'boolean' },
  target: { type: 'string' },
  'restart-rate': { type: 'string' },
  only: { type: 'string', multiple: true },
  minutes: { type: 'string' },
  json: { type: 'boolean' },
  faults: { type: 'string', multiple: true },
};

export const DEFAULT_CRASHES = 100;
export const DEFAULT_CONCURRENCY = 4;
/**
 * On the cluster the kills take turns (each stops everyone's work for a few seconds): with two iterations in flight,
 * 6 of 70 kills came after their iteration's work had settled (seed 20261201), and such an iteration fails. One at a
 * time, every kill lands at its point.
 */
export const DEFAULT_CLUSTER_CONCURRENCY = 1;
/** Each lane is a few provider processes and two workers at a time: more than this starves a small machine. */
const MAX_CONCURRENCY = 16;

const wholeNumber = (what: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `must be ${what}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

export const ChaosArgs = z.object({
  crashes: wholeNumber('a whole number of crashes', 1, 100_000).default(DEFAULT_CRASHES),
  seed: wholeNumber('a whole number from 0 to 4294967295 (the seed a previous run printed)', 0, 0xffff_ffff).optional(),
  scenario: z
    .array(z.string())
    .default([...DEFAULT_SCENARIOS])
    .transform((names) =>
      names
        .flatMap((n) => n.split(','))
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1, 'needs a scenario name')),
  concurrency: wholeNumber('a whole number of iterations in flight', 1, MAX_CONCURRENCY).optional(),
  baseline: z.boolean().default(false),
  target: z.enum(['dev-server', 'cluster'], { message: 'must be dev-server or cluster' }).default('dev-server'),
  minutes: wholeNumber('a whole number of minutes', 1, 10_000).optional(),
  'restart-rate': z
    .string()
    .regex(/^(0(\.[0-9]+)?|1(\.0+)?)$/, 'must be a probability from 0 to 1, e.g. 0.1')
    .transform(Number)
    .optional(),
  only: z
    .array(z.string())
    .transform((values, ctx) => {
      const out: number[] = [];
      for (const v of values.flatMap((x) => x.split(',')).map((x) => x.trim())) {
        const range = /^([0-9]+)-([0-9]+)$/.exec(v);
        if (range) {
          const [from, to] = [Number(range[1]), Number(range[2])];
          if (from > to || to - from >= 100_000) {
            ctx.addIssue({
              code: 'custom',
              message: `${JSON.stringify(v)} is not a range FIRST-LAST with FIRST ≤ LAST`,
            });
            return z.NEVER;
          }
          for (let i = from; i <= to; i++) out.push(i);
          continue;
        }
        if (!/^[0-9]+$/.test(v)) {
          ctx.addIssue({
            code: 'custom',
            message: `${JSON.stringify(v)} is not an iteration index or a range such as 500-999`,
          });
          return z.NEVER;
        }
        out.push(Number(v));
      }
      return [...new Set(out)];
    })
    .optional(),
  json: z.boolean().default(false),
  faults: z.array(z.string()).optional(),
});
export type ChaosArgs = z.output<typeof ChaosArgs>;

/** Iteration indexes as `--only` takes them, runs of three or more written as ranges: `0-499,512`. */
export function formatIndexes(indexes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < indexes.length;) {
    let j = i;
    while (j + 1 < indexes.length && indexes[j + 1] === indexes[j]! + 1) j++;
    if (j - i >= 2) parts.push(`${indexes[i]}-${indexes[j]}`);
    else for (let k = i; k <= j; k++) parts.push(String(indexes[k]));
    i = j + 1;
  }
  return parts.join(',');
}

export function parseChaosArgs(argv: readonly string[]): Omit<ChaosArgs, 'concurrency' | 'faults'> & {
  concurrency: number;
  help: boolean;
  faults?: FaultKind[];
} {
  const { flags, positionals, help } = parseArgv(argv, CHAOS_FLAGS);
  if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const args = validateArgs(ChaosArgs, flags);
  const known = SCENARIOS.map((s) => s.name);
  for (const name of args.scenario) {
    if (known.includes(name)) continue;
    throw new UsageError(`--scenario: unknown scenario ${JSON.stringify(name)}; available: ${known.join(', ')}`);
  }
  if (args.target === 'cluster' && (args['restart-rate'] ?? 0) > 0) {
    throw new UsageError(
      '--restart-rate: the cluster restarts no whole server; each iteration kills one of its services instead',
    );
  }
  const concurrency =
    args.concurrency ?? (args.target === 'cluster' ? DEFAULT_CLUSTER_CONCURRENCY : DEFAULT_CONCURRENCY);
  const faults = args.faults ? parseFaultKinds(args.faults) : undefined;
  if (faults && (args['restart-rate'] ?? 0) > 0) {
    throw new UsageError('--restart-rate: with --faults, server restarts are the server-restart kind');
  }
  const { faults: _given, ...rest } = args;
  return {
    ...rest,
    concurrency,
    help,
    scenario: [...new Set(args.scenario)],
    ...(faults ? { faults } : {}),
  };
}

export const CHAOS_USAGE = `Usage: npm run chaos -- [options]
  --crashes N        iterations, each with one real SIGKILL of a worker (default ${DEFAULT_CRASHES})
  --seed S           replay a run (printed by every run)
  --scenario NAME    repeatable; one of ${SCENARIOS.map((s) => s.name).join(', ')}
                     (default: ${DEFAULT_SCENARIOS.join(', ')}; the others run on real servers)
  --concurrency K    iterations in flight at once, each with its own event ID and providers (default ${DEFAULT_CONCURRENCY},
                     ${DEFAULT_CLUSTER_CONCURRENCY} on the cluster)
  --baseline         also run the same plans on bare Temporal (fresh key per attempt, no reconciliation)
  --target T         dev-server (default) or cluster: the real server's services on PostgreSQL, started for the
                     run (npm run cluster); each iteration also SIGKILLs history, matching or the frontend, or
                     restarts PostgreSQL with pg_ctl -m immediate, at its crash point, then brings it back
  --restart-rate P   chance per iteration of a dev-server restart during recovery (default ${DEFAULT_RESTART_RATE};
                     not with --target cluster)
  --only I[,J-K]     run only these iteration indexes of the seeded sequence; J-K is every index from J to K, so a
                     long run can be split (each iteration's plan depends only on the seed and its index)
  --minutes M        start no iteration after M minutes; the report covers the iterations that ran
                     (Ctrl-C does the same at once: the running iterations finish and are reported)
  --faults K[,K]     each iteration injects one fault kind drawn by the seed, when the provider has committed and
                     holds its reply: ${FAULT_KINDS.filter((k) => !REFUSED[k]).join(', ')}, or all
                     (${Object.keys(REFUSED).join(' and ')} are refused, each saying what it lacks); the table and
                     --json gain the counts by fault kind (byFault)
  --json             one JSON object on the last line of stdout; the table goes to stderr`;
