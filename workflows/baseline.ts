/**
 * Bare Temporal, for the chaos harness and the benchmark to compare retrysafe with. Not used by retrysafe.
 *
 *   baselineChargeWorkflow ─▶ bareCharge (default retry policy, fresh key per attempt) ─▶ { chargeId }
 *   baselineSignalWorkflow ─▶ condition(resume signal) ─▶ { waitedMs }
 *
 * The charge uses the same heartbeat timeout as retrysafe's executor, so both notice a dead worker
 * equally fast; what differs is only what a retry does (see activities/baseline.ts).
 */
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { BareChargeInput, BareChargeResult } from '../activities/baseline';
import { DISPATCH_HEARTBEAT_TIMEOUT } from '../policies/timeouts';

type Activities = ReturnType<typeof createActivities>;

/** Resumes a waiting baselineSignalWorkflow. */
export const baselineResumeSignal = defineSignal<[{ sentAtMs: number }]>('baseline.resume');
/** True once the workflow is blocked on its signal, so a benchmark times only the signal's way in. */
export const baselineWaitingQuery = defineQuery<boolean>('baseline.waiting');

/** Short, as the issue asks of the baseline: a provider call plus its hold faults fit well inside it. */
const BARE_CHARGE_START_TO_CLOSE = '15s';

export async function baselineChargeWorkflow(input: BareChargeInput): Promise<BareChargeResult> {
  // No `retry`: the server's default policy (1 s doubling, unlimited attempts), as a bare activity gets it.
  const { bareCharge } = proxyActivities<Activities>({
    startToCloseTimeout: BARE_CHARGE_START_TO_CLOSE,
    heartbeatTimeout: DISPATCH_HEARTBEAT_TIMEOUT,
    summary: `bare charge for ${input.merchantReference}`,
  });
  return bareCharge(input);
}

export async function baselineSignalWorkflow(): Promise<{ sentAtMs: number }> {
  let resume: { sentAtMs: number } | undefined;
  setHandler(baselineResumeSignal, (s) => {
    resume = s;
  });
  setHandler(baselineWaitingQuery, () => resume === undefined);
  await condition(() => resume !== undefined);
  return resume!;
}
