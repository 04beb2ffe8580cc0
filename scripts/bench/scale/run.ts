import { availableParallelism } from 'node:os';
import { ExampleClient } from '../../../examples/client';
import { exampleRegistry } from '../../../examples/tools';
import { startStack } from '../../lib/stack';
import type { ScaleArgs } from './args';
import { describeHealth } from './burst-health';
import type { CpuByProcess } from '../process-cpu';
import { measureConcurrent, type ConcurrentReport } from './concurrent';
import { growthOf, type Growth } from './growth';
import { measureLongRun, type LongRunReport } from './long-run';
import { measureQueue, type QueuePoint } from './queue';

export interface ScaleReport {
  longRun?: LongRunReport;
  /** Every retrysafe burst, in the order run (`rounds` per size). */
  concurrent: ConcurrentReport[];
  /** The same bursts of bare activities, side by side with them: bare first in odd rounds, second in even ones. */
  bare: ConcurrentReport[];
  /** Per size: retrysafe's throughput over all its bursts ÷ bare's over all theirs, and each round's ratio. */
  ratios: BurstRatio[];
  /** Wall time of a burst against its size, and the worker's peak memory against it. */
  concurrentGrowth?: { wall?: Growth; p50?: Growth; rssAboveIdle?: Growth };
  queue: QueuePoint[];
  /** Growth of queueMs less the empty tenant's (QueuePoint.readMs) with the queue's length. */
  queueGrowth?: Growth;
  durationMs: number;
  /** CPU cores this machine offers (os.availableParallelism): with CPU per action, a ceiling on throughput. */
  cores: number;
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
    const report: ScaleReport = {
      concurrent: [],
      bare: [],
      ratios: [],
      queue: [],
      durationMs: 0,
      cores: availableParallelism(),
    };
    if (args['long-run'] > 0) {
      log(`scale: one run of ${args['long-run']} actions`);
      report.longRun = await measureLongRun(ctx, args['long-run']);
    }
    for (const n of args.concurrent.filter((x) => x > 0)) {
      for (let round = 1; round <= args.rounds; round++) {
        // Side by side on the same worker, the order turned round every other round: a burst's place in the run
        // changes its throughput by up to a fifth (docs/testing.md), so neither side may always hold the same one.
        const order = round % 2 === 1 ? (['bare', 'retrysafe'] as const) : (['retrysafe', 'bare'] as const);
        for (const side of order) {
          const what = side === 'bare' ? 'bare activities' : 'actions';
          log(`scale: ${n} ${what} at once on one worker (round ${round} of ${args.rounds})`);
          const r = await measureConcurrent(ctx, n, side, round);
          log(
            `  ${n} ${side} at once: p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.throughputPerSec}/s, ` +
              `worker peak ${r.rssPeakMiB ?? '?'} MiB, ${r.kibPerActionInFlight ?? '?'} KiB per action in flight`,
          );
          if (r.health) log(`    ${describeHealth(r.health)}`);
          (side === 'bare' ? report.bare : report.concurrent).push(r);
        }
      }
      const ofSize = (bursts: ConcurrentReport[]) => bursts.filter((b) => b.actions === n);
      const summary = burstRatio(ofSize(report.concurrent), ofSize(report.bare));
      log(
        `  ${n} at once: retrysafe ×${summary.throughputRatio} of bare over ${args.rounds} round(s) (${summary.perRound.map((x) => `×${x}`).join(', ')})`,
      );
      report.ratios.push(summary);
    }
    if (report.ratios.length > 1) {
      const idle = report.concurrent[0].rssBeforeMiB;
      report.concurrentGrowth = {
        wall: growthOf(meanPerSize(report.concurrent, (r) => r.wallMs)),
        p50: growthOf(meanPerSize(report.concurrent, (r) => r.p50)),
        ...(idle !== undefined
          ? { rssAboveIdle: growthOf(meanPerSize(report.concurrent, (r) => (r.rssPeakMiB ?? idle) - idle)) }
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

export interface BurstRatio {
  actions: number;
  rounds: number;
  /** Actions per second over all bursts of the size (their actions ÷ their summed wall time), retrysafe ÷ bare. */
  throughputRatio: number;
  /** Each round's own ratio, in the order run. */
  perRound: number[];
  /** CPU ms per action by process over all bursts of the size, each side (where every burst could count it). */
  cpuMsPerAction?: { retrysafe: CpuByProcess; bare: CpuByProcess };
}

/** The ratio of one size over its rounds: total actions over total wall time on each side, so no round weighs more. */
export function burstRatio(retrysafe: readonly ConcurrentReport[], bare: readonly ConcurrentReport[]): BurstRatio {
  if (retrysafe.length === 0 || retrysafe.length !== bare.length) {
    throw new Error(`burstRatio: ${retrysafe.length} retrysafe bursts against ${bare.length} bare ones`);
  }
  const rate = (bursts: readonly ConcurrentReport[]) =>
    bursts.reduce((n, b) => n + b.actions, 0) / (bursts.reduce((ms, b) => ms + b.wallMs, 0) / 1000);
  const cpu = { retrysafe: meanCpu(retrysafe), bare: meanCpu(bare) };
  return {
    actions: retrysafe[0].actions,
    rounds: retrysafe.length,
    throughputRatio: ratio(rate(retrysafe), rate(bare)),
    perRound: retrysafe.map((r, i) => ratio(r.throughputPerSec, bare[i].throughputPerSec)),
    ...(cpu.retrysafe && cpu.bare ? { cpuMsPerAction: { retrysafe: cpu.retrysafe, bare: cpu.bare } } : {}),
  };
}

/** CPU per action by process over bursts, weighted by their actions; only processes every burst counted. */
function meanCpu(bursts: readonly ConcurrentReport[]): CpuByProcess | undefined {
  const counted = bursts.map((b) => b.cpuMsPerAction);
  if (counted.some((c) => c === undefined)) return undefined;
  const names = Object.keys(counted[0]!).filter((name) => counted.every((c) => c![name] !== undefined));
  const actions = bursts.reduce((n, b) => n + b.actions, 0);
  return Object.fromEntries(
    names.map((name) => [
      name,
      Math.round((bursts.reduce((ms, b) => ms + b.cpuMsPerAction![name] * b.actions, 0) / actions) * 100) / 100,
    ]),
  );
}

/** The bursts of each size averaged over its rounds, for the growth fits (one point per size). */
function meanPerSize(bursts: readonly ConcurrentReport[], pick: (b: ConcurrentReport) => number) {
  const sizes = [...new Set(bursts.map((b) => b.actions))];
  return sizes.map((size) => {
    const mine = bursts.filter((b) => b.actions === size);
    return { size, cost: mine.reduce((s, b) => s + pick(b), 0) / mine.length };
  });
}
