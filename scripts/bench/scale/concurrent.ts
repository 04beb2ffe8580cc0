import type { WorkflowHandle } from '@temporalio/client';
import { baselineChargeWorkflow, retrysafeChargeWorkflow } from '../../../examples/workflows/baseline';
import { summarize } from '../stats';
import { countCpu, cpuPerOperation, type CpuByProcess } from '../process-cpu';
import { burstHealth, type BurstHealth } from './burst-health';
import type { ScaleContext } from './context';
import { rssMiB, sampleRss } from './rss';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, runWorkflowId } from 'retrysafe';

export interface ConcurrentReport {
  /** retrysafe actions (retrysafeChargeWorkflow), or as many bare activities (baselineChargeWorkflow). */
  side: 'retrysafe' | 'bare';
  actions: number;
  confirmed: number;
  p50: number;
  p99: number;
  max: number;
  wallMs: number;
  throughputPerSec: number;
  /** The worker's resident memory before the burst and its highest sample during it. */
  rssBeforeMiB?: number;
  rssPeakMiB?: number;
  /** (peak − before) ÷ actions: what one action in flight holds of the worker's memory. */
  kibPerActionInFlight?: number;
  /**
   * CPU ms per action in each process over the burst (Linux): the dev server, the worker, the payment provider and
   * this process (the client), and their `total`. On two cores a burst is CPU-bound, so this says where its time goes.
   */
  cpuMsPerAction?: CpuByProcess;
  /** Read from the burst's histories after it, untimed: retries and timeouts that explain a slow tail. */
  health?: BurstHealth;
}

/** The processes a burst's CPU is counted in; read for each burst, as the dev server's pid changes on a restart. */
function burstProcesses(ctx: ScaleContext): Record<string, number | undefined> {
  const server = (ctx.stack.server as { pid?: unknown }).pid;
  return {
    server: typeof server === 'number' ? server : undefined,
    worker: ctx.worker.pid,
    provider: ctx.stack.providers.payments.pid,
    client: process.pid,
  };
}

/**
 * `n` actions (or, for `bare`, as many bare Temporal activities charging the same way) started at once on the one
 * worker, each timed from its start to its result.
 */
export async function measureConcurrent(
  ctx: ScaleContext,
  n: number,
  side: 'retrysafe' | 'bare' = 'retrysafe',
  round = 1,
): Promise<ConcurrentReport> {
  // Every burst its own workflow IDs, and so its own action keys: a second round under the first one's keys would
  // find their ledger rows settled and answer from them without a send.
  const burst = `${ctx.tag}-c${n}-r${round}`;
  const rssBeforeMiB = await rssMiB(ctx.worker.pid);
  const sampler = sampleRss(ctx.worker.pid);
  const cpu = await countCpu(burstProcesses(ctx));
  const t0 = performance.now();
  const latencies: number[] = [];
  let confirmed = 0;
  let done = 0;
  const workflowIds: string[] = [];
  const progress = setInterval(() => ctx.log(`    ${done} of ${n} actions done`), 10_000);
  try {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const started = performance.now();
        const charge = {
          amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10,
          currency: 'usd',
          customerId: 'cus_scale',
          paymentMethod: 'pm_scale',
          merchantReference: `C-${burst}-${side}-${i}`,
        };
        if (side === 'bare') {
          const workflowId = `scale:bare:${burst}-${i}`;
          workflowIds.push(workflowId);
          await ctx.client.workflow.execute(baselineChargeWorkflow, {
            workflowId,
            taskQueue: ctx.taskQueue,
            args: [charge],
          });
          confirmed++;
        } else {
          const workflowId = runWorkflowId('scale', `${burst}-${i}`);
          workflowIds.push(workflowId);
          const handle: WorkflowHandle<typeof retrysafeChargeWorkflow> = await ctx.client.workflow.start(
            retrysafeChargeWorkflow,
            { workflowId, taskQueue: ctx.taskQueue, args: [charge] },
          );
          if ((await handle.result()).status === 'confirmed') confirmed++;
        }
        latencies.push(performance.now() - started);
        done++;
      }),
    );
  } finally {
    clearInterval(progress);
  }
  const wallMs = performance.now() - t0;
  const cpuMsPerAction = cpuPerOperation(await cpu.stop(), n);
  const rssPeakMiB = await sampler.stop();
  const s = summarize(latencies, wallMs);
  const health = await burstHealth(ctx.client, workflowIds);
  return {
    side,
    actions: n,
    confirmed,
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    wallMs: Math.round(wallMs),
    throughputPerSec: s.throughputPerSec,
    ...(rssBeforeMiB !== undefined ? { rssBeforeMiB } : {}),
    ...(rssPeakMiB !== undefined ? { rssPeakMiB } : {}),
    ...(rssBeforeMiB !== undefined && rssPeakMiB !== undefined
      ? { kibPerActionInFlight: Math.round(((rssPeakMiB - rssBeforeMiB) * 1024) / n) }
      : {}),
    ...(Object.keys(cpuMsPerAction).length > 1 ? { cpuMsPerAction } : {}),
    health,
  };
}
