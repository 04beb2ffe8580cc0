import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import type { FaultRecord } from '../../scripts/chaos/faults';
import type { IterationPlan, IterationResult, Tally, Variant } from '../../scripts/chaos/types';

/**
 * A counted renewal iteration as the harness reports it (three effects, all there, after a SIGKILL), with `tally`
 * changing what the test needs; `plan` defaults to seed 1's plan for `index`, `fault` replaces the kill.
 */
export function chaosResult(
  index: number,
  variant: Variant,
  tally: Partial<Tally> = {},
  extra: { plan?: IterationPlan; signal?: NodeJS.Signals | null; durationMs?: number; fault?: FaultRecord } = {},
): IterationResult {
  const plan = extra.plan ?? planIteration(1, index, scenarioByName('renewal')!, { restartRate: 0 });
  const signal = extra.signal === undefined ? 'SIGKILL' : extra.signal;
  return {
    index,
    scenario: 'renewal',
    variant,
    eventId: `e${index}`,
    taskQueue: `q${index}`,
    plan,
    // A fault other than a kill leaves the worker alive: the iteration then has the fault's record, not a crash.
    ...(extra.fault
      ? { fault: extra.fault }
      : { crash: { mode: plan.crash.mode, pid: 1, signal, pointReached: true, atMs: 10 } }),
    tally: {
      outcome: 'renewed',
      expectedEffects: 3,
      actualEffects: 3,
      duplicates: 0,
      lost: 0,
      unknown: 0,
      needsReview: 0,
      unexplained: [],
      ...tally,
    },
    durationMs: extra.durationMs ?? 1,
    timeline: {},
  };
}
