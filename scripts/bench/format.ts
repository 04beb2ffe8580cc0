import { spreadOf } from './compare';
import { COMPARISONS, observedWhat } from './legs';
import { formatOperationCost } from './operation-cost';
import { cpuRatio, describeCpu } from './process-cpu';
import type { BenchReport } from './run';

/** The human-readable report of `npm run bench`: the table, each leg's cost, its eager starts, every ratio, recovery. */
export function formatBench(r: BenchReport): string[] {
  const levels = Object.keys(r.legs[0]?.stats ?? {});
  const header = [
    'leg',
    'load',
    'n',
    'p50 ms',
    'p50 over rounds',
    'p95 ms',
    'p99 ms',
    'mean ms',
    'ops/s',
    'ops/s over rounds',
  ];
  const range = ([lo, hi]: [number, number]) => (lo === hi ? `${lo}` : `${lo}–${hi}`);
  const rows = r.legs.flatMap((l) =>
    levels.map((level) => {
      const s = l.stats[level];
      const rounds = l.rounds[level];
      return [
        l.label,
        level,
        s.n,
        s.p50,
        range(spreadOf(rounds, 'p50')),
        s.p95,
        s.p99,
        s.mean,
        s.throughputPerSec,
        range(spreadOf(rounds, 'throughputPerSec')),
      ].map(String);
    }),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [
    '',
    `bench on ${r.machine}, ${r.repeats} round(s), ${(r.durationMs / 1000).toFixed(0)} s`,
    line(header),
    ...rows.map(line),
  ];
  for (const s of r.skipped) out.push(`skipped ${s.id}: ${s.reason}`);
  for (const l of r.legs) {
    if (!l.cost) continue;
    const c = l.cost;
    const spread = (name: string, [lo, hi]: [number, number]) => (lo === hi ? '' : `, ${name} ${lo}–${hi}`);
    out.push(
      `per operation, ${l.label}: ${formatOperationCost(c)}` +
        `; over ${c.sampled} operations${spread('events', c.eventsRange)}${spread('tasks', c.workflowTasksRange)}`,
    );
  }
  for (const l of r.legs) {
    if (!l.eagerStarts) continue;
    out.push(`eager starts, ${l.label}: ${l.eagerStarts.eager} of ${l.eagerStarts.requested} measured starts`);
  }
  for (const l of r.legs) {
    for (const [level, cpu] of Object.entries(l.cpuMsPerOperation ?? {})) {
      out.push(`CPU per operation, ${l.label} [${level}]: ${describeCpu(cpu)}`);
    }
  }
  for (const c of COMPARISONS) {
    const [a, b] = [c.retrysafe, c.bare].map((id) => r.legs.find((l) => l.id === id)?.cpuMsPerOperation);
    for (const level of levels) {
      const x = a?.[level] && b?.[level] ? cpuRatio(a[level], b[level]) : undefined;
      if (!x) continue;
      const each = Object.entries(x).filter(([name]) => name !== 'total');
      out.push(
        `CPU per operation, ${c.retrysafe} ÷ ${c.bare} (${c.name}, ${level}): ×${x.total}` +
          (each.length ? ` (${each.map(([name, v]) => `${name} ×${v}`).join(', ')})` : ''),
      );
    }
  }
  for (const [pair, byLevel] of Object.entries(r.ratios)) {
    for (const [level, x] of Object.entries(byLevel)) {
      // The ledger comparison sets the action with the ledger against the action without it; the observability one,
      // the action on ledger workers exporting metrics and traces against the same without them.
      const what =
        pair === 'ledger'
          ? 'with/without ledger'
          : pair === 'observability'
            ? `with/without ${observedWhat(r.observe)}`
            : pair === 'action-vs-fastest'
              ? "retrysafe/Temporal's fastest shape"
              : 'retrysafe/bare';
      if ('refused' in x) {
        out.push(`${what} (${pair}, ${level}): no ratio, ${x.refused}`);
        continue;
      }
      const m = x.median;
      out.push(
        `${what} (${pair}, ${level}): p50 ×${m.p50} (rounds ×${range(x.spread.p50)}), p95 ×${m.p95}, ` +
          `p99 ×${m.p99}, throughput ×${m.throughput} (rounds ×${range(x.spread.throughput)}); median of ${x.rounds}`,
      );
    }
  }
  if (r.ratios.signal || r.ratios.update) {
    out.push(
      'signal and update pairs: each approved charge reaches its outcome, untimed, before its slot times the next ' +
        "approval, so the confirmation's throughput counts the charge, and at concurrency 10 fewer approvals than " +
        'signals or updates are in flight: only the sequential p50 compares like with like',
    );
  }
  for (const side of ['retrysafe', 'bare'] as const) {
    const x = r.recovery[side];
    if (!x) continue;
    out.push(
      `recovery ${side}: SIGKILL → confirmed p50 ${x.p50} ms (×${x.p50OverBound} the ${x.boundMs} ms ${x.bound}), ` +
        `max ${x.max} ms over ${x.samples.length}; duplicate charges in ${x.duplicates} of ${x.samples.length}`,
    );
  }
  out.push(`chart: ${r.chart}`);
  return out;
}
