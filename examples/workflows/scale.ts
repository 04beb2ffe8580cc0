/**
 * For `npm run bench:scale`: one run that takes many actions in turn, to show how a run's cost grows with its
 * length. Each action is a charge of its own step (`charge-<i>`), settled as kept before the next starts, so
 * only the run's own history grows; the time each action took is read from workflow time, which is the time
 * its workflow tasks started.
 *
 *   manyActionsWorkflow({ count }) ─▶ act(charge-1) ─▶ settle ─▶ … ─▶ act(charge-N) ─▶ settle ─▶ { msPerAction }
 */
import { workflowInfo } from '@temporalio/workflow';
import type { BareChargeInput } from '../activities/bare-charge';
import { ActionRun, parseRunWorkflowId, toolRefs } from 'retrysafe/workflow';
import type { ExampleTools } from '../tools';

const tools = toolRefs<ExampleTools>();

export interface ManyActionsInput {
  count: number;
  charge: BareChargeInput;
}

export interface ManyActionsResult {
  /** Workflow time from the claim of each action to its settlement, in order. */
  msPerAction: number[];
  confirmed: number;
}

export async function manyActionsWorkflow(input: ManyActionsInput): Promise<ManyActionsResult> {
  const run = new ActionRun(parseRunWorkflowId(workflowInfo().workflowId));
  const msPerAction: number[] = [];
  let confirmed = 0;
  for (let i = 1; i <= input.count; i++) {
    const t0 = Date.now();
    const charge = await run.act(
      tools.charge,
      { ...input.charge, merchantReference: `${input.charge.merchantReference}-${i}` },
      { step: `charge-${i}` },
    );
    if (charge.status === 'confirmed') {
      confirmed++;
      await run.settle(charge.key, { state: 'kept' });
    }
    msPerAction.push(Date.now() - t0);
  }
  return { msPerAction, confirmed };
}
