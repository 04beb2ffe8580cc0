import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { msToNumber } from '@temporalio/common/lib/time';
import { ExampleClient } from '../../examples/client';
import { exampleRegistry } from '../../examples/tools';
import { DISPATCH_HEARTBEAT_TIMEOUT } from '../../policies/timeouts';
import { createApprover } from '../chaos/approvals';
import { startStack, type Stack } from '../lib/stack';
import type { WorkerProcess } from '../lib/worker-process';
import { COMPARISONS, LegUnavailable, benchLegs, type BenchContext, type Leg, type Pair } from './legs';
import { measureRecovery, type RecoverySample, type WorkerPool } from './recovery';
import { ratios, runLoad, summarize, type LatencyStats } from './stats';
import { latencyChartSvg, type Series } from './svg';

const ROOT = path.resolve(__dirname, '..', '..');

export interface BenchOptions {
  /** Measured operations per leg and load level. */
  iterations: number;
  /** The concurrent load level (the sequential one is always measured). */
  concurrency: number;
  /** Untimed operations per leg first: JIT, sticky caches, connection pools. */
  warmup: number;
  /** SIGKILL recoveries measured per side. */
  recoveries: number;
  log?: (line: string) => void;
  stack?: Stack;
}

export interface LegReport {
  id: string;
  label: string;
  side: 'bare' | 'retrysafe';
  pair?: Pair;
  /** Keyed by load level: `seq` and `c<K>`. */
  stats: Record<string, LatencyStats>;
  samples: Record<string, number[]>;
}

export interface BenchReport {
  iterations: number;
  concurrency: number;
  machine: string;
  legs: LegReport[];
  skipped: Array<{ id: string; reason: string }>;
  /** retrysafe ÷ bare per pair and load level. */
  ratios: Record<string, Record<string, ReturnType<typeof ratios>>>;
  recovery: {
    heartbeatTimeoutMs: number;
    retrysafe?: RecoveryStats;
    bare?: RecoveryStats;
  };
  chart: string;
  durationMs: number;
}

export interface RecoveryStats {
  samples: number[];
  p50: number;
  max: number;
  /** p50 ÷ heartbeat timeout. */
  p50OverHeartbeat: number;
  /** Orders that ended with more than one charge at the provider. */
  duplicates: number;
}

const WORKERS = 2;
const COLORS: Record<string, string> = {
  'bare-activity': '#1f77b4',
  'bare-child-activity': '#17becf',
  'retrysafe-action': '#d62728',
  'retrysafe-action-ledger': '#8c564b',
  'retrysafe-renewal': '#9467bd',
  'bare-signal': '#2ca02c',
  'retrysafe-confirmation': '#ff7f0e',
};

/**
 * Runs every leg sequentially and at the concurrent load level on one dev server with two workers, then
 * the SIGKILL recoveries, and writes the latency chart to .out/bench/.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const tag = `b${Date.now().toString(36)}`;
  const stack = options.stack ?? (await startStack({ log: (m) => log(`  ${m}`) }));
  const approver = createApprover('bench-approver');
  const taskQueue = `bench-${tag}`;
  const env = { ...approver.workerEnv, RETRYSAFE_TASK_QUEUE: taskQueue };
  const spawn = (i: number) => stack.startWorker({ name: `${taskQueue}-w${i}`, env });
  const pool: WorkerPool = {
    workers: await Promise.all(Array.from({ length: WORKERS }, (_, i) => spawn(i))),
    async replace(dead: WorkerProcess) {
      const i = pool.workers.indexOf(dead);
      pool.workers[i] = await spawn(i);
    },
  };
  // The same workers again on a second queue, keeping the durable ledger in a throw-away SQLite file.
  const ledgerTaskQueue = `${taskQueue}-ledger`;
  const ledgerDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bench-ledger-'));
  const ledgerEnv = {
    ...env,
    RETRYSAFE_TASK_QUEUE: ledgerTaskQueue,
    RETRYSAFE_LEDGER: `sqlite:${path.join(ledgerDir, 'ledger.sqlite')}`,
  };
  await Promise.all(
    Array.from({ length: WORKERS }, (_, i) => stack.startWorker({ name: `${ledgerTaskQueue}-w${i}`, env: ledgerEnv })),
  );
  const ctx: BenchContext = {
    client: stack.client,
    retrysafe: new ExampleClient(stack.client, { taskQueue, tools: exampleRegistry() }),
    taskQueue,
    approver,
    ledgerTaskQueue,
  };
  const levels: Array<[string, number]> = [
    ['seq', 1],
    [`c${options.concurrency}`, options.concurrency],
  ];
  const legs: LegReport[] = [];
  const skipped: BenchReport['skipped'] = [];
  try {
    for (const leg of benchLegs(ctx)) {
      try {
        legs.push(await measureLeg(leg, tag, levels, options, log));
      } catch (err) {
        if (!(err instanceof LegUnavailable)) throw err;
        skipped.push({ id: leg.id, reason: err.message });
        log(`  ${leg.label}: skipped (${err.message})`);
      }
    }
    const recovery: BenchReport['recovery'] = { heartbeatTimeoutMs: msToNumber(DISPATCH_HEARTBEAT_TIMEOUT) };
    for (const side of ['retrysafe', 'bare'] as const) {
      const samples: RecoverySample[] = [];
      for (let i = 0; i < options.recoveries; i++) {
        const sample = await measureRecovery(side, `${tag}-rec-${side}-${i}`, {
          client: stack.client,
          taskQueue,
          payments: stack.providers.payments,
          pool,
        });
        samples.push(sample);
        log(`  recovery ${side} #${i + 1}: ${Math.round(sample.ms)} ms, ${sample.charges} charge(s) at the provider`);
      }
      if (samples.length) recovery[side] = recoveryStats(samples, recovery.heartbeatTimeoutMs);
    }

    const chart = await writeChart(tag, legs, levels, options);
    return {
      iterations: options.iterations,
      concurrency: options.concurrency,
      machine: `${os.cpus().length} CPU(s), ${os.platform()} ${os.arch()}, node ${process.version}`,
      legs,
      skipped,
      ratios: pairRatios(legs, levels),
      recovery,
      chart: path.relative(ROOT, chart),
      durationMs: Date.now() - started,
    };
  } finally {
    await Promise.all(pool.workers.map((w) => w.stop()));
    if (!options.stack) await stack.stop();
  }
}

async function measureLeg(
  leg: Leg,
  tag: string,
  levels: Array<[string, number]>,
  options: BenchOptions,
  log: (line: string) => void,
): Promise<LegReport> {
  for (let i = 0; i < options.warmup; i++) await (await leg.prepare(`${tag}-${leg.id}-warm-${i}`))();
  const report: LegReport = { id: leg.id, label: leg.label, side: leg.side, stats: {}, samples: {} };
  if (leg.pair) report.pair = leg.pair;
  for (const [level, k] of levels) {
    // Preparation (a workflow waiting for its signal, an action waiting for approval) is not timed.
    const ops = (await runPrepared(options.iterations, options.concurrency, (i) =>
      leg.prepare(`${tag}-${leg.id}-${level}-${i}`),
    ))!;
    const { samples, wallMs } = await runLoad(options.iterations, k, (i) => ops[i]());
    report.samples[level] = samples.map((s) => Math.round(s * 10) / 10);
    report.stats[level] = summarize(samples, wallMs);
    const s = report.stats[level];
    log(`  ${leg.label} [${level}]: p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms, ${s.throughputPerSec}/s`);
  }
  return report;
}

async function runPrepared<T>(n: number, concurrency: number, prepare: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n);
  await runLoad(n, concurrency, async (i) => {
    out[i] = await prepare(i);
    return 0;
  });
  return out;
}

function pairRatios(legs: LegReport[], levels: Array<[string, number]>): BenchReport['ratios'] {
  const out: BenchReport['ratios'] = {};
  for (const c of COMPARISONS) {
    const bare = legs.find((l) => l.id === c.bare);
    const rs = legs.find((l) => l.id === c.retrysafe);
    if (!bare || !rs) continue;
    out[c.name] = Object.fromEntries(levels.map(([level]) => [level, ratios(rs.stats[level], bare.stats[level])]));
  }
  return out;
}

function recoveryStats(samples: RecoverySample[], heartbeatMs: number): RecoveryStats {
  const ms = samples.map((s) => Math.round(s.ms));
  const s = summarize(ms, 1);
  return {
    samples: ms,
    p50: s.p50,
    max: s.max,
    p50OverHeartbeat: Math.round((s.p50 / heartbeatMs) * 100) / 100,
    duplicates: samples.filter((x) => x.charges > 1).length,
  };
}

async function writeChart(tag: string, legs: LegReport[], levels: Array<[string, number]>, o: BenchOptions) {
  const dir = path.join(ROOT, '.out', 'bench');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `latency-${tag}.svg`);
  const panels = levels.map(([level, k]) => ({
    title: k === 1 ? 'sequential' : `concurrency ${k}`,
    series: legs.map((l): Series => ({
      label: `${l.label} — p50 ${l.stats[level].p50} ms`,
      color: COLORS[l.id] ?? '#333',
      samples: l.samples[level],
      dashed: l.side === 'bare',
    })),
  }));
  await writeFile(
    file,
    latencyChartSvg(`retrysafe vs bare Temporal: latency CDF, ${o.iterations} operations per leg`, panels),
  );
  return file;
}
