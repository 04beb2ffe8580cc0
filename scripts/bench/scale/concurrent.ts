import type { WorkflowHandle } from '@temporalio/client';
import { retrysafeChargeWorkflow } from '../../../examples/workflows/baseline';
import { summarize } from '../stats';
import type { ScaleContext } from './context';
import { rssMiB, sampleRss } from './rss';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, runWorkflowId } from 'retrysafe';

export interface ConcurrentReport {
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
}

/** `n` actions started at once on the one worker, each timed from its start to its result. */
export async function measureConcurrent(ctx: ScaleContext, n: number): Promise<ConcurrentReport> {
  const rssBeforeMiB = await rssMiB(ctx.worker.pid);
  const sampler = sampleRss(ctx.worker.pid);
  const t0 = performance.now();
  const latencies: number[] = [];
  let confirmed = 0;
  let done = 0;
  const progress = setInterval(() => ctx.log(`    ${done} of ${n} actions done`), 10_000);
  try {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const started = performance.now();
        const handle: WorkflowHandle<typeof retrysafeChargeWorkflow> = await ctx.client.workflow.start(
          retrysafeChargeWorkflow,
          {
            workflowId: runWorkflowId('scale', `${ctx.tag}-c${n}-${i}`),
            taskQueue: ctx.taskQueue,
            args: [
              {
                amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10,
                currency: 'usd',
                customerId: 'cus_scale',
                paymentMethod: 'pm_scale',
                merchantReference: `C-${ctx.tag}-${n}-${i}`,
              },
            ],
          },
        );
        const r = await handle.result();
        latencies.push(performance.now() - started);
        if (r.status === 'confirmed') confirmed++;
        done++;
      }),
    );
  } finally {
    clearInterval(progress);
  }
  const wallMs = performance.now() - t0;
  const rssPeakMiB = await sampler.stop();
  const s = summarize(latencies, wallMs);
  return {
    actions: n,
    confirmed,
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    wallMs: Math.round(wallMs),
    throughputPerSec: s.throughputPerSec,
    ...(rssBeforeMiB !== undefined ? { rssBeforeMiB } : {}),
    ...(rssPeakMiB !== undefined ? { rssPeakMiB } : {}),
  };
}
