import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { msToNumber } from '@temporalio/common/lib/time';
import { ExampleClient } from '../../examples/client';
import { exampleRegistry } from '../../examples/tools';
import { createApprover } from '../chaos/approvals';
import { startStack, type Stack } from '../lib/stack';
import { startInProcessWorkers } from './in-process-workers';
import {
  COMPARISONS,
  LegUnavailable,
  assertEager,
  benchLegs,
  type BenchContext,
  type EagerStarts,
  type Leg,
  type Pair,
} from './legs';
import { measureRecovery, startWorkerPool, type RecoverySample } from './recovery';
import { DEFAULT_REPEATS } from './args';
import { incomparable, roundRatios, type LegSetting, type RoundRatios } from './compare';
import { operationCost, type OperationCost } from './operation-cost';
import { countCpu, cpuPerOperation, type CpuByProcess } from './process-cpu';
import { runLoad, summarize, type LatencyStats } from './stats';
import { latencyChartSvg, type Series } from './svg';
import { DISPATCH_HEARTBEAT_TIMEOUT, WORKFLOW_TASK_TIMEOUT } from '../../policies/timeouts';
import { ledgerConfigFromEnv, openLedger } from 'retrysafe/worker';
import { getFreePort } from '../../cli/dev/free-port';

const ROOT = path.resolve(__dirname, '..', '..');

export interface BenchOptions {
  /** Measured operations per leg, load level and round. */
  iterations: number;
  /** Rounds: every leg is measured once per round, in turn (default DEFAULT_REPEATS). */
  repeats?: number;
  /** The concurrent load level (the sequential one is always measured). */
  concurrency: number;
  /** Untimed operations per leg first: JIT, sticky caches, connection pools. */
  warmup: number;
  /** SIGKILL recoveries measured per side. */
  recoveries: number;
  /** Only the legs with these ids. */
  legs?: string[];
  /** What the observed workers export: metrics, traces or both (default). */
  observe?: 'metrics' | 'traces' | 'both';
  log?: (line: string) => void;
  stack?: Stack;
}

export interface LegReport {
  id: string;
  label: string;
  side: 'bare' | 'retrysafe';
  pair?: Pair;
  /** Where it ran: a ratio is only taken between legs whose settings agree (compare.ts). */
  setting: LegSetting;
  /** Keyed by load level, `seq` and `c<K>`: over every round's operations together. */
  stats: Record<string, LatencyStats>;
  /** Keyed by load level: one entry per round, in order. */
  rounds: Record<string, LatencyStats[]>;
  samples: Record<string, number[]>;
  /**
   * Read from the histories of the last round's first sequential operations (COST_SAMPLES of them), for legs
   * that name their workflows: the first one's breakdown, and the range of totals over all of them.
   */
  cost?: OperationCost & { sampled: number; eventsRange: [number, number]; workflowTasksRange: [number, number] };
  /** For a leg that starts its workflows eagerly: measured starts asked to be eager, and those that were. */
  eagerStarts?: EagerStarts;
  /**
   * Keyed by load level: CPU ms per operation over every round's timed load (Linux), by process: the dev server, the
   * leg's worker processes, the payment provider and this process (`bench`: the client, and the workers of the legs
   * that run in it), and their `total`. Less spread than the latencies, and on two cores what bounds throughput.
   */
  cpuMsPerOperation?: Record<string, CpuByProcess>;
}

export interface BenchReport {
  iterations: number;
  concurrency: number;
  repeats: number;
  machine: string;
  legs: LegReport[];
  skipped: Array<{ id: string; reason: string }>;
  /** retrysafe ÷ bare per pair and load level, per round then summarized; or why the two legs may not be compared. */
  ratios: Record<string, Record<string, RoundRatios | { refused: string }>>;
  recovery: {
    heartbeatTimeoutMs: number;
    /** The run's workflow task timeout: what bounds retrysafe's recovery, its act being a local activity. */
    workflowTaskTimeoutMs: number;
    retrysafe?: RecoveryStats;
    bare?: RecoveryStats;
  };
  chart: string;
  durationMs: number;
  /** What the observed leg's workers exported. */
  observe: 'metrics' | 'traces' | 'both';
}

export interface RecoveryStats {
  samples: number[];
  p50: number;
  max: number;
  /**
   * What notices the dead worker: the run's workflow task timeout for retrysafe (the act runs in that task, a local
   * activity), the activity's heartbeat timeout for the bare workflow.
   */
  bound: 'workflow task timeout' | 'heartbeat timeout';
  boundMs: number;
  /** p50 ÷ the bound. */
  p50OverBound: number;
  /** Orders that ended with more than one charge at the provider. */
  duplicates: number;
}

const WORKERS = 2;
/** Operations whose histories are read per leg: enough to see whether the count varies between operations. */
const COST_SAMPLES = 3;
const COLORS: Record<string, string> = {
  'bare-activity': '#1f77b4',
  'bare-child-activity': '#17becf',
  'bare-local-eager': '#8c564b',
  'retrysafe-action': '#d62728',
  'retrysafe-action-eager': '#ff7f0e',
  'retrysafe-action-observed': '#e377c2',
  'retrysafe-renewal': '#9467bd',
  'bare-signal': '#2ca02c',
  'bare-update': '#bcbd22',
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
  // The bench gives each queue's workers their ledger (or none) itself.
  const stack = options.stack ?? (await startStack({ log: (m) => log(`  ${m}`) }));
  const approver = createApprover('bench-approver');
  const taskQueue = `bench-${tag}`;
  // Every worker keeps the durable ledger (a throw-away SQLite file), as a deployment does: the record-first path.
  const ledgerDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bench-ledger-'));
  const baseEnv = { ...approver.workerEnv, RETRYSAFE_TASK_QUEUE: taskQueue };
  const env = { ...baseEnv, RETRYSAFE_LEDGER: `sqlite:${path.join(ledgerDir, 'ledger.sqlite')}` };
  // The bench reads it too: an action its run settled on the row has no workflow to ask (recoveries).
  const ledger = await openLedger(ledgerConfigFromEnv({ RETRYSAFE_LEDGER: env.RETRYSAFE_LEDGER })!);
  const spawn = (i: number) => stack.startWorker({ name: `${taskQueue}-w${i}`, env });
  const pool = await startWorkerPool(WORKERS, spawn);
  // And once more keeping the ledger and exporting metrics (each worker on a port of its own, scraped every second
  // as a busy Prometheus would) and traces: what observing an action costs.
  const observedTaskQueue = `${taskQueue}-observed`;
  const scrapes: string[] = [];
  const traces = await startTraceSink();
  const observe = options.observe ?? 'both';
  const observedWorkers = await Promise.all(
    Array.from({ length: WORKERS }, async (_, i) => {
      const address = `127.0.0.1:${await getFreePort()}`;
      if (observe !== 'traces') scrapes.push(`http://${address}/metrics`);
      return stack.startWorker({
        name: `${observedTaskQueue}-w${i}`,
        env: {
          ...env,
          RETRYSAFE_TASK_QUEUE: observedTaskQueue,
          ...(observe !== 'metrics'
            ? { RETRYSAFE_TRACING: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces.url }
            : {}),
          ...(observe !== 'traces' ? { RETRYSAFE_METRICS_ADDRESS: address } : {}),
        },
      });
    }),
  );
  const scraper = scrapeEverySecond(scrapes);
  // Eager start hands a workflow's first task to a worker beside the client that starts it: only workers in this
  // process, on the client's own connection, can take it. Started only when a leg needs them.
  const eagerTaskQueue = `${taskQueue}-eager`;
  const inProcess =
    !options.legs || options.legs.some((id) => EAGER_LEGS.includes(id))
      ? await startInProcessWorkers(stack, eagerTaskQueue, WORKERS, ledger)
      : undefined;
  const ctx: BenchContext = {
    client: stack.client,
    retrysafe: new ExampleClient(stack.client, { taskQueue, tools: exampleRegistry(), ledger }),
    taskQueue,
    approver,
    observedTaskQueue,
    observe,
    ...(inProcess ? { eager: { clients: inProcess.clients, taskQueue: eagerTaskQueue, ledger } } : {}),
  };
  const levels: Array<[string, number]> = [
    ['seq', 1],
    [`c${options.concurrency}`, options.concurrency],
  ];
  const legs: LegReport[] = [];
  const skipped: BenchReport['skipped'] = [];
  const repeats = options.repeats ?? DEFAULT_REPEATS;
  // What every worker was given but its task queue and ledger: the same for both queues here, by construction.
  // Values as short digests: the comparison needs equality, and a report must not carry a key's value.
  const tuning = Object.fromEntries(
    Object.entries(env)
      .filter(([k]) => k !== 'RETRYSAFE_TASK_QUEUE' && k !== 'RETRYSAFE_LEDGER')
      .map(([k, v]) => [k, createHash('sha256').update(v).digest('hex').slice(0, 12)]),
  );
  const settingOf = (leg: Leg): LegSetting =>
    leg.inBenchProcess
      ? {
          // None of the worker processes' settings: the bench process's workers run the bare charge and, with the
          // plugin and the same ledger, retrysafe's run.
          server: `${stack.server.address} (${stack.server.namespace})`,
          taskQueue: eagerTaskQueue,
          workers: WORKERS,
          tuning: {},
          ledger: true,
          observed: false,
          inBenchProcess: true,
        }
      : {
          server: `${stack.server.address} (${stack.server.namespace})`,
          taskQueue: leg.observedWorkers ? observedTaskQueue : taskQueue,
          workers: WORKERS,
          tuning,
          ledger: true,
          observed: leg.observedWorkers === true,
        };
  // Where a leg's operations spend CPU: its workers are the pool's processes, the observed ones or this process.
  const serverPid = (stack.server as { pid?: unknown }).pid;
  const processesOf = (leg: Leg) => ({
    server: typeof serverPid === 'number' ? serverPid : undefined,
    ...(leg.inBenchProcess
      ? {}
      : { workers: (leg.observedWorkers ? observedWorkers : pool.workers).map((w) => w.pid) }),
    provider: stack.providers.payments.pid,
    bench: process.pid,
  });
  const cpuUsed = new Map<LegReport, Record<string, { used: CpuByProcess; operations: number }>>();
  try {
    const measured: Array<{ leg: Leg; report: LegReport }> = [];
    const all = benchLegs(ctx);
    const unknown = (options.legs ?? []).filter((id) => !all.some((l) => l.id === id));
    if (unknown.length)
      throw new Error(`no such leg: ${unknown.join(', ')} (legs: ${all.map((l) => l.id).join(', ')})`);
    for (const leg of all.filter((l) => !options.legs || options.legs.includes(l.id))) {
      try {
        for (let i = 0; i < options.warmup; i++) await (await leg.prepare(`${tag}-${leg.id}-warm-${i}`))();
        // Counted over the measured operations only.
        if (leg.eagerStarts) Object.assign(leg.eagerStarts, { requested: 0, eager: 0 });
        const report: LegReport = {
          id: leg.id,
          label: leg.label,
          side: leg.side,
          ...(leg.pair ? { pair: leg.pair } : {}),
          setting: settingOf(leg),
          stats: {},
          rounds: {},
          samples: {},
        };
        measured.push({ leg, report });
      } catch (err) {
        if (!(err instanceof LegUnavailable)) throw err;
        skipped.push({ id: leg.id, reason: err.message });
        log(`  ${leg.label}: skipped (${err.message})`);
      }
    }
    // Round by round, every leg in turn: a slow minute on the machine falls on every leg of that round.
    for (let round = 1; round <= repeats; round++) {
      log(`  round ${round} of ${repeats}`);
      for (const { leg, report } of measured) {
        const cpu = await measureRound(leg, report, `${tag}-r${round}`, levels, options, log, processesOf(leg));
        const sums = cpuUsed.get(report) ?? {};
        for (const [level, used] of Object.entries(cpu)) sums[level] = addCpu(sums[level], used, options.iterations);
        cpuUsed.set(report, sums);
      }
    }
    for (const { leg, report } of measured) {
      for (const [level] of levels)
        report.stats[level] = summarize(report.samples[level], sumWall(report.rounds[level]));
      const cpu = Object.entries(cpuUsed.get(report) ?? {}).filter(([, c]) => Object.keys(c.used).length > 0);
      if (cpu.length) {
        report.cpuMsPerOperation = Object.fromEntries(
          cpu.map(([level, c]) => [level, cpuPerOperation(c.used, c.operations)]),
        );
      }
      const cost = await costOf(stack, leg, `${tag}-r${repeats}`, Math.min(COST_SAMPLES, options.iterations));
      if (cost) report.cost = cost;
      if (leg.eagerStarts) {
        report.eagerStarts = { ...leg.eagerStarts };
        assertEager(leg.id, leg.eagerStarts);
      }
      legs.push(report);
    }
    const recovery: BenchReport['recovery'] = {
      heartbeatTimeoutMs: msToNumber(DISPATCH_HEARTBEAT_TIMEOUT),
      workflowTaskTimeoutMs: msToNumber(WORKFLOW_TASK_TIMEOUT),
    };
    for (const side of ['retrysafe', 'bare'] as const) {
      const samples: RecoverySample[] = [];
      for (let i = 0; i < options.recoveries; i++) {
        const sample = await measureRecovery(side, `${tag}-rec-${side}-${i}`, {
          ledger,
          client: stack.client,
          taskQueue,
          payments: stack.providers.payments,
          pool,
        });
        samples.push(sample);
        log(`  recovery ${side} #${i + 1}: ${Math.round(sample.ms)} ms, ${sample.charges} charge(s) at the provider`);
      }
      if (samples.length) {
        recovery[side] =
          side === 'retrysafe'
            ? recoveryStats(samples, 'workflow task timeout', recovery.workflowTaskTimeoutMs)
            : recoveryStats(samples, 'heartbeat timeout', recovery.heartbeatTimeoutMs);
      }
    }

    const chart = await writeChart(tag, legs, levels, options);
    return {
      iterations: options.iterations,
      concurrency: options.concurrency,
      repeats,
      machine: `${os.cpus().length} CPU(s), ${os.platform()} ${os.arch()}, node ${process.version}`,
      legs,
      skipped,
      ratios: pairRatios(legs, levels),
      recovery,
      chart: path.relative(ROOT, chart),
      observe,
      durationMs: Date.now() - started,
    };
  } finally {
    const scraped = await scraper.stop();
    log(`  metrics: ${scraped.ok} scrapes answered, ${scraped.failed} failed`);
    log(`  traces: ${traces.batches} OTLP batches received, ${Math.round(traces.bytes / 1024)} KiB`);
    await traces.close();
    await Promise.all(pool.workers.map((w) => w.stop()));
    await inProcess?.stop();
    await ledger.close();
    if (!options.stack) await stack.stop();
  }
}

/** The legs that start their workflows eagerly, on workers in the bench's own process. */
const EAGER_LEGS = ['bare-local-eager', 'retrysafe-action-eager'];

/**
 * Where the observed workers export their traces (OTLP/HTTP): a local endpoint that reads and drops each batch, so
 * the workers pay for making, batching, encoding and sending spans, as they would to a collector.
 */
async function startTraceSink(): Promise<{ url: string; batches: number; bytes: number; close(): Promise<void> }> {
  const sink = { batches: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (sink.bytes += chunk.length));
    req.on('end', () => {
      sink.batches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    get batches() {
      return sink.batches;
    },
    get bytes() {
      return sink.bytes;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Fetches each URL every second, as Prometheus scraping these workers would, until stopped. */
function scrapeEverySecond(urls: readonly string[]): { stop(): Promise<{ ok: number; failed: number }> } {
  const counts = { ok: 0, failed: 0 };
  const scrape = () =>
    Promise.all(
      urls.map((u) =>
        fetch(u, { signal: AbortSignal.timeout(900) })
          .then(async (res) => {
            await res.text();
            counts[res.ok ? 'ok' : 'failed']++;
          })
          .catch(() => counts.failed++),
      ),
    );
  let inFlight: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => (inFlight = scrape()), 1_000);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      return counts;
    },
  };
}

/** One round of one leg at every load level, added to its report. */
async function measureRound(
  leg: Leg,
  report: LegReport,
  tag: string,
  levels: Array<[string, number]>,
  options: BenchOptions,
  log: (line: string) => void,
  processes: Parameters<typeof countCpu>[0],
): Promise<Record<string, CpuByProcess>> {
  const cpuByLevel: Record<string, CpuByProcess> = {};
  for (const [level, k] of levels) {
    // Preparation (a workflow waiting for its signal, an action waiting for approval) is not timed, nor counted.
    const ops = (await runPrepared(options.iterations, options.concurrency, (i) =>
      leg.prepare(`${tag}-${leg.id}-${level}-${i}`),
    ))!;
    const cpu = await countCpu(processes);
    const { samples, wallMs } = await runLoad(options.iterations, k, (i) => ops[i]());
    cpuByLevel[level] = await cpu.stop();
    (report.samples[level] ??= []).push(...samples.map((s) => Math.round(s * 10) / 10));
    const s = summarize(samples, wallMs);
    (report.rounds[level] ??= []).push(s);
    log(`  ${leg.label} [${level}]: p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms, ${s.throughputPerSec}/s`);
  }
  return cpuByLevel;
}

/**
 * Adds one round's CPU to a leg's sum at a level. A process counted in one round and not another (a worker replaced
 * meanwhile) would be counted short, so the sum keeps only what every round counted.
 */
function addCpu(
  sum: { used: CpuByProcess; operations: number } | undefined,
  used: CpuByProcess,
  operations: number,
): { used: CpuByProcess; operations: number } {
  if (!sum) return { used: { ...used }, operations };
  const names = Object.keys(sum.used).filter((name) => used[name] !== undefined);
  return {
    used: Object.fromEntries(names.map((name) => [name, sum.used[name] + used[name]])),
    operations: sum.operations + operations,
  };
}

/** Events and workflow tasks of a leg's operations, from their histories (sequential level, names as measureRound gives them). */
async function costOf(stack: Stack, leg: Leg, roundTag: string, n: number): Promise<LegReport['cost']> {
  if (!leg.workflows || n < 1) return undefined;
  const costs: OperationCost[] = [];
  for (let i = 0; i < n; i++) {
    costs.push(await operationCost(stack.client, leg.workflows(`${roundTag}-${leg.id}-seq-${i}`)));
  }
  const range = (f: (c: OperationCost) => number): [number, number] => [
    Math.min(...costs.map(f)),
    Math.max(...costs.map(f)),
  ];
  return {
    ...costs[0],
    sampled: n,
    eventsRange: range((c) => c.events),
    workflowTasksRange: range((c) => c.workflowTasks),
  };
}

const sumWall = (rounds: readonly LatencyStats[]) => rounds.reduce((ms, r) => ms + r.wallMs, 0);

async function runPrepared<T>(n: number, concurrency: number, prepare: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n);
  await runLoad(n, concurrency, async (i) => {
    out[i] = await prepare(i);
    return 0;
  });
  return out;
}

/** `npm run bench -- --json`'s line: the report with each leg's statistics, without its samples (they are in the chart). */
export function benchJson(report: BenchReport): string {
  const { legs, ...rest } = report;
  return JSON.stringify({ ...rest, legs: legs.map(({ samples: _samples, ...leg }) => leg) });
}

/** The ratio of each comparison whose two legs both ran, per load level; refused when their settings disagree. */
export function pairRatios(legs: readonly LegReport[], levels: ReadonlyArray<[string, number]>): BenchReport['ratios'] {
  const out: BenchReport['ratios'] = {};
  for (const c of COMPARISONS) {
    const bare = legs.find((l) => l.id === c.bare);
    const rs = legs.find((l) => l.id === c.retrysafe);
    if (!bare || !rs) continue;
    const refused = incomparable(rs.setting, bare.setting, 'measures' in c ? c.measures : undefined);
    out[c.name] = Object.fromEntries(
      levels.map(([level]) => [level, refused ? { refused } : roundRatios(rs.rounds[level], bare.rounds[level])]),
    );
  }
  return out;
}

function recoveryStats(samples: RecoverySample[], bound: RecoveryStats['bound'], boundMs: number): RecoveryStats {
  const ms = samples.map((s) => Math.round(s.ms));
  const s = summarize(ms, 1);
  return {
    samples: ms,
    p50: s.p50,
    max: s.max,
    bound,
    boundMs,
    p50OverBound: Math.round((s.p50 / boundMs) * 100) / 100,
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
