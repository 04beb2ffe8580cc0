/** Latency statistics for the benchmark: nearest-rank percentiles, so every reported value was observed. */
export interface LatencyStats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
  /** Completed operations per second over the measured phase's wall time. */
  throughputPerSec: number;
  wallMs: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(samples: readonly number[], wallMs: number): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
    throughputPerSec: round((sorted.length / wallMs) * 1000),
    wallMs: Math.round(wallMs),
  };
}

/** retrysafe ÷ bare for latencies (above 1: slower) and throughput (below 1: fewer per second). */
export function ratios(retrysafe: LatencyStats, bare: LatencyStats) {
  const r = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  return {
    p50: r(retrysafe.p50, bare.p50),
    p95: r(retrysafe.p95, bare.p95),
    p99: r(retrysafe.p99, bare.p99),
    throughput: r(retrysafe.throughputPerSec, bare.throughputPerSec),
  };
}

/**
 * Runs `n` operations with at most `concurrency` in flight and collects the latency each one reports
 * (an operation times only its own measured part, e.g. signal → result, not its setup).
 */
export async function runLoad(
  n: number,
  concurrency: number,
  op: (i: number) => Promise<number>,
): Promise<{ samples: number[]; wallMs: number }> {
  const samples: number[] = new Array<number>(n);
  let nextIndex = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      for (let i = nextIndex++; i < n; i = nextIndex++) samples[i] = await op(i);
    }),
  );
  return { samples, wallMs: performance.now() - started };
}
