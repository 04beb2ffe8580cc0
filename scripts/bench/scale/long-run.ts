import { manyActionsWorkflow } from '../../../examples/workflows/scale';
import { historyAsJson } from '../../lib/history-json';
import type { ScaleContext } from './context';
import { drift, growthOf, type Growth } from './growth';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, runWorkflowId } from 'retrysafe';

export interface LongRunReport {
  actions: number;
  confirmed: number;
  wallMs: number;
  /** The run's own history at its end (the actions' workflows are separate and each stays small). */
  historyEvents: number;
  historyBytes: number;
  /** The run's events and bytes per action. */
  eventsPerAction: number;
  bytesPerAction: number;
  /** Workflow time of each action, first to last. */
  msPerAction: number[];
  /** The first ten actions against the last ten. */
  drift?: { first: number; last: number; ratio: number };
  /** Action time against its position in the run: an exponent near 0 means the hundredth costs what the first did. */
  perActionGrowth?: Growth;
}

/** One run of `count` actions in turn; its history and the time of each action. */
export async function measureLongRun(ctx: ScaleContext, count: number): Promise<LongRunReport> {
  const workflowId = runWorkflowId('scale', `${ctx.tag}-long-${count}`);
  const t0 = performance.now();
  const result = await ctx.client.workflow.execute(manyActionsWorkflow, {
    workflowId,
    taskQueue: ctx.taskQueue,
    args: [
      {
        count,
        charge: {
          amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10,
          currency: 'usd',
          customerId: 'cus_scale',
          paymentMethod: 'pm_scale',
          merchantReference: `L-${ctx.tag}`,
        },
      },
    ],
  });
  const wallMs = Math.round(performance.now() - t0);
  const history = await ctx.client.workflow.getHandle(workflowId).fetchHistory();
  const historyEvents = history.events?.length ?? 0;
  const historyBytes = Buffer.byteLength(JSON.stringify(historyAsJson(history)));
  const d = drift(result.msPerAction);
  const g = growthOf(result.msPerAction.map((cost, i) => ({ size: i + 1, cost })));
  return {
    actions: count,
    confirmed: result.confirmed,
    wallMs,
    historyEvents,
    historyBytes,
    eventsPerAction: Math.round((historyEvents / count) * 10) / 10,
    bytesPerAction: Math.round(historyBytes / count),
    msPerAction: result.msPerAction,
    ...(d ? { drift: d } : {}),
    ...(g ? { perActionGrowth: g } : {}),
  };
}
