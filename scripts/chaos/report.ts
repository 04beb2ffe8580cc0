import { FAULT_KINDS, killsWorker, type FaultKind } from './faults';
import { describePlan } from './plan';
import {
  CLUSTER_FAULT_TARGETS,
  CRASH_MODES,
  type ClusterFaultTarget,
  type CrashMode,
  type IterationResult,
  type Variant,
} from './types';

/** What a set of iterations adds up to, as counted at the providers. */
export interface Counts {
  iterations: number;
  /**
   * Iterations that got their real kill: the doomed worker's SIGKILL (exit signal observed) or, where the plan spared
   * the worker, the cluster kill at its point.
   */
  crashes: number;
  /** Armed points the work never reached; the harness killed the worker anyway. */
  missedPoints: number;
  expectedEffects: number;
  actualEffects: number;
  duplicates: number;
  lost: number;
  unknown: number;
  needsReview: number;
  /** Iteration findings no scenario predicted (each reason counts once). */
  unexplained: number;
  /** The ledger rows checked against the providers, and those out of step. */
  ledgerRows?: number;
  ledgerOutOfStep?: number;
  byMode: Partial<Record<CrashMode, KindCounts>>;
  /** With `--faults`: the same by the iteration's fault kind. */
  byFault: Partial<Record<FaultKind, KindCounts>>;
}

export interface KindCounts {
  iterations: number;
  /**
   * By fault kind: iterations whose fault actually struck (a worker-kill's SIGKILL observed; any other kind recorded as
   * injected by faults.ts, a reply toxic only when it hit the targeted reply). `iterations` is how many were planned.
   */
  injected?: number;
  duplicates: number;
  lost: number;
  unexplained: number;
  /** A partition kind's: from each heal until the iteration's work settled, in ms, in iteration order. */
  settledAfterHealMs?: number[];
}

export interface VariantReport {
  totals: Counts;
  scenarios: Record<string, Counts>;
}

export interface Failure {
  index: number;
  scenario: string;
  variant: Variant;
  plan: string;
  reasons: string[];
  notes: string[];
  rerun: string;
}

/** With `--target cluster`: the kills of one service (or the database), and how long the cluster took to serve again. */
export interface ClusterKillSummary {
  target: ClusterFaultTarget;
  kills: number;
  /** Of which the worker died at the same moment. */
  withWorker: number;
  failed: number;
  /** From the restart until a probe through frontend, history and matching succeeded. */
  recoveryMs: { median: number; p90: number; max: number };
  /** How long after the crash point the kill came (kills take turns). */
  afterPointMs: { median: number; max: number };
  duplicates: number;
  lost: number;
}

export interface ChaosReport {
  seed: number;
  /** Which Temporal the run killed things on. */
  target: 'dev-server' | 'cluster';
  /** With `--target cluster`, per service killed. */
  cluster?: ClusterKillSummary[];
  crashesRequested: number;
  /** Why the run stopped before every planned iteration ran (a time budget, Ctrl-C). */
  stoppedEarly?: string;
  concurrency: number;
  durationMs: number;
  serverRestarts: number;
  workersReplacedAfterRestart: number;
  retrysafe: VariantReport;
  baseline?: VariantReport;
  /** retrysafe iterations with a duplicate, a lost effect or anything unexplained. */
  failures: Failure[];
  rerun: string;
  logDir: string;
  iterations: IterationResult[];
}

export function emptyCounts(): Counts {
  return {
    iterations: 0,
    crashes: 0,
    missedPoints: 0,
    expectedEffects: 0,
    actualEffects: 0,
    duplicates: 0,
    lost: 0,
    unknown: 0,
    needsReview: 0,
    unexplained: 0,
    byMode: {},
    byFault: {},
  };
}

export function addResult(c: Counts, r: IterationResult): void {
  const t = r.tally;
  c.iterations++;
  if (gotItsKill(r)) c.crashes++;
  if ((r.crash && !r.crash.pointReached) || (r.fault && !r.fault.injected)) c.missedPoints++;
  c.expectedEffects += t.expectedEffects;
  c.actualEffects += t.actualEffects;
  c.duplicates += t.duplicates;
  c.lost += t.lost;
  c.unknown += t.unknown;
  c.needsReview += t.needsReview;
  c.unexplained += t.unexplained.length;
  if (t.ledgerRows !== undefined) {
    c.ledgerRows = (c.ledgerRows ?? 0) + t.ledgerRows;
    c.ledgerOutOfStep = (c.ledgerOutOfStep ?? 0) + (t.ledgerOutOfStep ?? 0);
  }
  const add = (k: KindCounts) => {
    k.iterations++;
    k.duplicates += t.duplicates;
    k.lost += t.lost;
    k.unexplained += t.unexplained.length;
  };
  const empty = () => ({ iterations: 0, duplicates: 0, lost: 0, unexplained: 0 });
  // A fault other than a kill replaced the plan's crash: its crash mode says nothing about the iteration.
  if (killsWorker(r.plan.fault?.kind)) add((c.byMode[r.plan.crash.mode] ??= empty()));
  if (r.plan.fault) {
    const k = (c.byFault[r.plan.fault.kind] ??= { ...empty(), injected: 0 });
    add(k);
    if (gotItsKill(r)) k.injected = (k.injected ?? 0) + 1;
    const afterHeal = r.fault?.settledAfterHealMs;
    if (afterHeal !== undefined) (k.settledAfterHealMs ??= []).push(afterHeal);
  }
}

export function summarize(results: readonly IterationResult[]): VariantReport {
  const totals = emptyCounts();
  const scenarios: Record<string, Counts> = {};
  for (const r of results) {
    addResult(totals, r);
    addResult((scenarios[r.scenario] ??= emptyCounts()), r);
  }
  return { totals, scenarios };
}

/** The worker died by SIGKILL, or it was spared and the cluster kill at its point happened. */
export function gotItsKill(r: IterationResult): boolean {
  if (!killsWorker(r.plan.fault?.kind)) return r.fault?.injected === true;
  if (r.crash?.workerSpared) return r.clusterFault !== undefined && r.clusterFault.error === undefined;
  return r.crash?.signal === 'SIGKILL';
}

export function isFailure(r: IterationResult): boolean {
  return r.tally.duplicates > 0 || r.tally.lost > 0 || r.tally.unexplained.length > 0 || !gotItsKill(r);
}

export function summarizeClusterKills(results: readonly IterationResult[]): ClusterKillSummary[] {
  return CLUSTER_FAULT_TARGETS.map((target) => {
    const mine = results.filter((r) => r.clusterFault?.target === target);
    const recoveries = sorted(
      mine.filter((r) => r.clusterFault!.error === undefined).map((r) => r.clusterFault!.recoveryMs),
    );
    const delays = sorted(mine.map((r) => r.clusterFault!.afterPointMs ?? 0));
    return {
      target,
      kills: mine.length,
      withWorker: mine.filter((r) => !r.clusterFault!.spareWorker).length,
      failed: mine.filter((r) => r.clusterFault!.error !== undefined).length,
      recoveryMs: { median: rank(recoveries, 0.5), p90: rank(recoveries, 0.9), max: recoveries.at(-1) ?? 0 },
      afterPointMs: { median: rank(delays, 0.5), max: delays.at(-1) ?? 0 },
      duplicates: mine.reduce((n, r) => n + r.tally.duplicates, 0),
      lost: mine.reduce((n, r) => n + r.tally.lost, 0),
    };
  });
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

/** The nearest-rank percentile of sorted values (the lower middle for the median of an even count); 0 when empty. */
function rank(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  return values[Math.max(0, Math.ceil(q * values.length) - 1)];
}

/** One line per service killed: how often, with the worker or not, and how long the cluster took to serve again. */
export function formatClusterKills(kills: readonly ClusterKillSummary[]): string {
  return kills
    .map(
      (k) =>
        `  ${k.target.padEnd(9)} ${String(k.kills).padStart(3)} kills (${k.withWorker} with the worker)` +
        `${k.failed ? `, ${k.failed} failed` : ''} · back serving in median ${k.recoveryMs.median} ms, ` +
        `p90 ${k.recoveryMs.p90} ms, max ${k.recoveryMs.max} ms · killed ${k.afterPointMs.median} ms after the ` +
        `point (max ${k.afterPointMs.max}) · dup ${k.duplicates} · lost ${k.lost}`,
    )
    .join('\n');
}

export function failureOf(r: IterationResult, rerunOne: (index: number) => string): Failure {
  const reasons = [
    ...(r.tally.duplicates ? [`${r.tally.duplicates} duplicate effect(s)`] : []),
    ...(r.tally.lost ? [`${r.tally.lost} lost effect(s)`] : []),
    ...(!gotItsKill(r)
      ? [
          !killsWorker(r.plan.fault?.kind)
            ? `the ${r.plan.fault!.kind} fault was not injected (${r.fault?.detail ?? 'not recorded'})`
            : r.crash?.workerSpared
              ? `the cluster kill that spared the worker did not happen (${r.clusterFault?.error ?? 'not recorded'})`
              : `no SIGKILL observed (exit signal ${r.crash?.signal ?? 'none'})`,
        ]
      : []),
    ...r.tally.unexplained,
  ];
  return {
    index: r.index,
    scenario: r.scenario,
    variant: r.variant,
    plan: describePlan(r.plan),
    reasons,
    notes: r.tally.notes ?? [],
    rerun: rerunOne(r.index),
  };
}

/** The human table: one row per scenario and variant, then where the baseline's duplicates came from. */
export function formatTable(report: ChaosReport): string {
  const header = [
    'scenario',
    'variant',
    'crashes',
    'missed',
    'expected',
    'actual',
    'dup',
    'lost',
    'unknown',
    'review',
    'unexplained',
  ];
  const rows: string[][] = [];
  const push = (name: string, variant: string, c: Counts) =>
    rows.push([
      name,
      variant,
      ...[
        c.crashes,
        c.missedPoints,
        c.expectedEffects,
        c.actualEffects,
        c.duplicates,
        c.lost,
        c.unknown,
        c.needsReview,
        c.unexplained,
      ].map(String),
    ]);
  for (const [name, c] of Object.entries(report.retrysafe.scenarios)) {
    push(name, 'retrysafe', c);
    const b = report.baseline?.scenarios[name];
    if (b) push(name, 'baseline', b);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const out = [line(header), ...rows.map(line)];
  if (report.baseline) {
    for (const [name, c] of Object.entries(report.baseline.scenarios)) {
      const parts = CRASH_MODES.flatMap((m) => {
        const x = c.byMode[m];
        return x ? [`${m} ${x.duplicates} in ${x.iterations}`] : [];
      });
      out.push(`baseline duplicates by crash mode (${name}): ${parts.join(' · ')}`);
    }
  }
  if (Object.keys(report.retrysafe.totals.byFault).length) out.push('', formatByFault(report));
  return out.join('\n');
}

/** The `--json` object: the headline numbers first, then per scenario and the baseline. */
export function toJson(report: ChaosReport) {
  const t = report.retrysafe.totals;
  const strip = (v: VariantReport) => ({ ...v.totals, scenarios: v.scenarios });
  return {
    seed: report.seed,
    crashes: t.crashes,
    crashesRequested: report.crashesRequested,
    ...(report.stoppedEarly ? { stoppedEarly: report.stoppedEarly } : {}),
    duplicates: t.duplicates,
    lost: t.lost,
    unexplained: t.unexplained,
    unknown: t.unknown,
    needsReview: t.needsReview,
    expectedEffects: t.expectedEffects,
    actualEffects: t.actualEffects,
    missedPoints: t.missedPoints,
    serverRestarts: report.serverRestarts,
    workersReplacedAfterRestart: report.workersReplacedAfterRestart,
    concurrency: report.concurrency,
    durationMs: report.durationMs,
    target: report.target,
    ...(report.cluster ? { cluster: report.cluster } : {}),
    scenarios: report.retrysafe.scenarios,
    ...(Object.keys(t.byFault).length ? { byFault: t.byFault } : {}),
    ...(report.baseline ? { baseline: strip(report.baseline) } : {}),
    failures: report.failures,
    rerun: report.rerun,
  };
}

/** With `--faults`: one row per fault kind, retrysafe's counts and the baseline's duplicates beside them. */
export function formatByFault(report: ChaosReport): string {
  const header = [
    'fault',
    'iterations',
    'injected',
    'dup',
    'lost',
    'unexplained',
    'baseline iterations',
    'baseline dup',
    'settled after heal p50/max',
  ];
  const rows = FAULT_KINDS.flatMap((kind) => {
    const r = report.retrysafe.totals.byFault[kind];
    if (!r) return [];
    const b = report.baseline?.totals.byFault[kind];
    return [
      [
        kind,
        r.iterations,
        r.injected ?? '-',
        r.duplicates,
        r.lost,
        r.unexplained,
        b?.iterations ?? '-',
        b?.duplicates ?? '-',
        afterHeal(r.settledAfterHealMs),
      ].map(String),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** `p50/max ms` of the times from a heal to the work settled; `-` for a kind without a partition. */
function afterHeal(ms: readonly number[] | undefined): string {
  if (!ms?.length) return '-';
  const sorted = [...ms].sort((a, b) => a - b);
  return `${sorted[Math.floor((sorted.length - 1) / 2)]}/${sorted[sorted.length - 1]} ms`;
}
