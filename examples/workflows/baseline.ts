/**
 * Bare Temporal, for the chaos harness and the benchmark to compare retrysafe with. Not used by retrysafe.
 *
 *   baselineChargeWorkflow  ─▶ bareCharge (default retry policy, fresh key per attempt) ─▶ { chargeId }
 *   baselineLocalChargeWorkflow ─▶ bareCharge as a local activity ─▶ { chargeId }   (Temporal's fastest shape)
 *   baselineChildChargeWorkflow ─▶ child baselineChargeWorkflow ─▶ { chargeId }   (the two-workflow shape of an action)
 *   baselineSignalWorkflow  ─▶ condition(resume signal) ─▶ { sentAtMs }
 *   baselineUpdateWorkflow  ─▶ condition(resume update, its validator checks the argument) ─▶ { sentAtMs }
 *   retrysafeChargeWorkflow ─▶ act(charge) ─▶ settle(kept) ─▶ { status, chargeId }
 *   bareToolWorkflow        ─▶ bareTool (an example tool's own code, fresh key per attempt) ─▶ { providerRef }
 *
 * The last is the benchmark's other side: the same charge as one retrysafe action, in a run of its own
 * (workflow ID run:<tenant>:<eventId>), so both sides are timed from workflow start to result.
 *
 * The charge uses the same heartbeat timeout as retrysafe's executor, so both notice a dead worker
 * equally fast; what differs is only what a retry does (see activities/baseline.ts).
 */
import {
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { BareChargeInput, BareChargeResult, createBareCharge } from '../activities/bare-charge';
import type { BareToolInput, BareToolResult, createBareTool } from '../activities/bare-tool';
import { ActionRun, parseRunWorkflowId, toolRefs } from 'retrysafe/workflow';
import type { ExampleTools } from '../tools';

const tools = toolRefs<ExampleTools>();

type Activities = { bareCharge: ReturnType<typeof createBareCharge>; bareTool: ReturnType<typeof createBareTool> };

/** Resumes a waiting baselineSignalWorkflow. */
export const baselineResumeSignal = defineSignal<[{ sentAtMs: number }]>('baseline.resume');
/**
 * Resumes a waiting baselineUpdateWorkflow and answers once it has: a signal with a synchronous answer and a validator,
 * the bare shape of a person's approval (retrysafe's verifies a signature in its validator).
 */
export const baselineResumeUpdate = defineUpdate<{ resumed: true }, [{ sentAtMs: number }]>('baseline.resumeUpdate');
/** True once the workflow is blocked on its signal, so a benchmark times only the signal's way in. */
export const baselineWaitingQuery = defineQuery<boolean>('baseline.waiting');

/** Short, as the issue asks of the baseline: a provider call plus its hold faults fit well inside it. */
const BARE_CHARGE_START_TO_CLOSE = '15s';
/** The engine executor's heartbeat timeout, so a dead worker's attempt is retried as soon as retrysafe's is. */
const BARE_HEARTBEAT_TIMEOUT = '2s';

export async function baselineChargeWorkflow(input: BareChargeInput): Promise<BareChargeResult> {
  // No `retry`: the server's default policy (1 s doubling, unlimited attempts), as a bare activity gets it.
  const { bareCharge } = proxyActivities<Activities>({
    startToCloseTimeout: BARE_CHARGE_START_TO_CLOSE,
    heartbeatTimeout: BARE_HEARTBEAT_TIMEOUT,
    summary: `bare charge for ${input.merchantReference}`,
  });
  return bareCharge(input);
}

/**
 * Temporal's fastest hand-written shape of one short side effect: the same charge as a local activity, run by the
 * worker inside the workflow's first task, with no activity task of its own on the server. The benchmark starts it
 * eagerly (requestEagerStart on a client sharing the worker's connection), so that first task comes back in the
 * start call's own answer. A local activity re-runs with its workflow task after a crash, with a fresh key here:
 * the speed is the point of this baseline, not its safety.
 */
export async function baselineLocalChargeWorkflow(input: BareChargeInput): Promise<BareChargeResult> {
  const { bareCharge } = proxyLocalActivities<Activities>({
    startToCloseTimeout: BARE_CHARGE_START_TO_CLOSE,
    summary: `bare local charge for ${input.merchantReference}`,
  });
  return bareCharge(input);
}

/** The chaos harness's baseline for the tools on real servers (PostgreSQL, Mailpit, localstripe): same policy. */
export async function bareToolWorkflow(input: BareToolInput): Promise<BareToolResult> {
  const { bareTool } = proxyActivities<Activities>({
    startToCloseTimeout: BARE_CHARGE_START_TO_CLOSE,
    heartbeatTimeout: BARE_HEARTBEAT_TIMEOUT,
    summary: `bare ${input.operation}`,
  });
  return bareTool(input);
}

/**
 * The bare floor of retrysafe's shape: a run plus one more workflow per action, with no claim, policy,
 * status signals or search attributes. The benchmark sets retrysafe's action against this as well as
 * against the single activity, to separate the cost of a workflow per action from the rest.
 */
export async function baselineChildChargeWorkflow(input: BareChargeInput): Promise<BareChargeResult> {
  return executeChild(baselineChargeWorkflow, { workflowId: `${workflowInfo().workflowId}:charge`, args: [input] });
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

export async function baselineUpdateWorkflow(): Promise<{ sentAtMs: number }> {
  let resume: { sentAtMs: number } | undefined;
  setHandler(
    baselineResumeUpdate,
    (s) => {
      resume = s;
      return { resumed: true as const };
    },
    {
      validator: (s) => {
        if (typeof s?.sentAtMs !== 'number') throw new TypeError('sentAtMs must be a number');
      },
    },
  );
  setHandler(baselineWaitingQuery, () => resume === undefined);
  await condition(() => resume !== undefined);
  return resume!;
}

export async function retrysafeChargeWorkflow(input: BareChargeInput): Promise<{ status: string; chargeId?: string }> {
  const run = new ActionRun(parseRunWorkflowId(workflowInfo().workflowId));
  const charge = await run.act(tools.charge, input);
  // A confirmed charge stays open for a compensation until its run says it was kept.
  if (charge.status === 'confirmed') await run.settle(charge.key, { state: 'kept' });
  return { status: charge.status, ...(charge.providerRef ? { chargeId: charge.providerRef } : {}) };
}
