import { ExampleClient } from '../../../examples/client';
import { exampleRegistry } from '../../../examples/tools';
import { startStack } from '../../lib/stack';
import type { ScaleArgs } from './args';
import { describeHealth } from './burst-health';
import { measureConcurrent, type ConcurrentReport } from './concurrent';
import { growthOf, type Growth } from './growth';
import { measureLongRun, type LongRunReport } from './long-run';
import { measureQueue, type QueuePoint } from './queue';

export interface ScaleReport {
  longRun?: LongRunReport;
  concurrent: ConcurrentReport[];
  /** The same bursts of bare activities, each measured just before its retrysafe burst. */
  bare: ConcurrentReport[];
  /** Wall time of a burst against its size, and the worker's peak memory against it. */
  concurrentGrowth?: { wall?: Growth; p50?: Growth; rssAboveIdle?: Growth };
  queue: QueuePoint[];
  /** Growth of queueMs less the empty tenant's (QueuePoint.readMs) with the queue's length. */
  queueGrowth?: Growth;
  durationMs: number;
}

/** Every scale measurement on one dev server with one worker, in turn: the long run, the bursts, the queue. */
export async function runScale(args: ScaleArgs, log: (line: string) => void): Promise<ScaleReport> {
  const started = Date.now();
  const tag = Date.now().toString(36);
  const stack = await startStack({ log: (m) => log(`  ${m}`) });
  try {
    const taskQueue = `scale-${tag}`;
    const worker = await stack.startWorker({ name: `${taskQueue}-w`, env: { RETRYSAFE_TASK_QUEUE: taskQueue } });
    const ctx = {
      stack,
      client: stack.client,
      retrysafe: new ExampleClient(stack.client, { taskQueue, tools: exampleRegistry() }),
      taskQueue,
      worker,
      tag,
      log,
    };
    const report: ScaleReport = { concurrent: [], bare: [], queue: [], durationMs: 0 };
    if (args['long-run'] > 0) {
      log(`scale: one run of ${args['long-run']} actions`);
      report.longRun = await measureLongRun(ctx, args['long-run']);
    }
    for (const n of args.concurrent.filter((x) => x > 0)) {
      // The same number of bare activities first, on the same worker: the side-by-side the ratio is taken from.
      log(`scale: ${n} bare activities at once on one worker`);
      const bare = await measureConcurrent(ctx, n, 'bare');
      log(`  ${n} bare at once: p50 ${bare.p50} ms, p99 ${bare.p99} ms, ${bare.throughputPerSec}/s`);
      if (bare.health) log(`    ${describeHealth(bare.health)}`);
      report.bare.push(bare);
      log(`scale: ${n} actions at once on one worker`);
      const r = await measureConcurrent(ctx, n);
      log(
        `  ${n} at once: p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.throughputPerSec}/s (×${ratio(r.throughputPerSec, bare.throughputPerSec)} of bare), ` +
          `worker peak ${r.rssPeakMiB ?? '?'} MiB, ${r.kibPerActionInFlight ?? '?'} KiB per action in flight`,
      );
      if (r.health) log(`    ${describeHealth(r.health)}`);
      report.concurrent.push(r);
    }
    if (report.concurrent.length > 1) {
      const idle = report.concurrent[0].rssBeforeMiB;
      report.concurrentGrowth = {
        wall: growthOf(report.concurrent.map((r) => ({ size: r.actions, cost: r.wallMs }))),
        p50: growthOf(report.concurrent.map((r) => ({ size: r.actions, cost: r.p50 }))),
        ...(idle !== undefined
          ? {
              rssAboveIdle: growthOf(
                report.concurrent.map((r) => ({ size: r.actions, cost: (r.rssPeakMiB ?? idle) - idle })),
              ),
            }
          : {}),
      };
    }
    if (args.queue > 0) {
      log(`scale: ops queue over up to ${args.queue} actions awaiting confirmation`);
      report.queue = await measureQueue(ctx, args.queue, args['queue-steps']);
      report.queueGrowth = growthOf(report.queue.map((p) => ({ size: p.actions, cost: p.readMs })));
    }
    await worker.stop();
    report.durationMs = Date.now() - started;
    return report;
  } finally {
    await stack.stop();
  }
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
