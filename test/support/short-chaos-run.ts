import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import type { CrashMode } from '../../scripts/chaos/types';

/**
 * The short chaos run of `npm run test:long` (test/long/chaos.test.ts): two crashes in each of the six scenarios.
 * Its seed must draw every crash mode in twelve iterations, so a new crash mode usually needs a new seed;
 * test/unit/chaos-short-run.test.ts checks that in `npm test` and names the next seed that does.
 */
export const SHORT_RUN = {
  seed: 2702,
  scenarios: ['renewal', 'unknown-lookup', 'email-no-key', 'saga-compensation', 'approval', 'multi-agent'],
  restartRate: 0.2,
  crashes: 12,
  concurrency: 3,
} as const;

/**
 * The baseline comparison of the same file: with three scenarios, these iterations are renewals killed right after
 * the provider committed the charge with its answer, and after it answered 502/504 to a commit.
 */
export const BASELINE_RUN = {
  scenarios: ['renewal', 'unknown-lookup', 'email-no-key'],
  indices: [3, 72],
  modes: ['after-commit', 'gateway-error'] as CrashMode[],
} as const;

/** The crash mode of each iteration the short run would draw with `seed`. */
export function shortRunModes(seed: number = SHORT_RUN.seed): CrashMode[] {
  return Array.from({ length: SHORT_RUN.crashes }, (_, i) => {
    const scenario = scenarioByName(SHORT_RUN.scenarios[i % SHORT_RUN.scenarios.length])!;
    return planIteration(seed, i, scenario, { restartRate: SHORT_RUN.restartRate }).crash.mode;
  });
}

/** The crash mode the baseline comparison draws at each of its indices. */
export function baselineModes(seed: number = SHORT_RUN.seed): CrashMode[] {
  const renewal = scenarioByName('renewal')!;
  return BASELINE_RUN.indices.map(
    (i) => planIteration(seed, i, renewal, { restartRate: SHORT_RUN.restartRate }).crash.mode,
  );
}
