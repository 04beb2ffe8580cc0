import { ratios, type LatencyStats } from './stats';

/**
 * What a ratio between two legs may be taken from. Two legs are set side by side only when they ran on the same
 * server with the same number of workers and the same worker settings; a comparison that exists to measure one
 * setting (the ledger, metrics and traces) may differ in that one and nothing else. Each leg is measured in rounds (`--repeats`),
 * interleaved with the other legs, and a ratio is taken per round, so that drift on the machine falls on both sides.
 */
export interface LegSetting {
  /** The Temporal server the leg ran against (address, and the server process when known). */
  server: string;
  taskQueue: string;
  workers: number;
  /** Worker settings that change what a workflow task or activity costs (tuning, codec), by variable. */
  tuning: Record<string, string>;
  /** The workers keep the durable ledger. */
  ledger: boolean;
  /** The workers export metrics (scraped every second) and traces. */
  observed: boolean;
  /** The workers run in the bench's own process, beside the client that starts the workflows (eager start). */
  inBenchProcess?: boolean;
}

/**
 * The one setting a comparison exists to measure, which its two legs may differ in. `shape` sets an action against
 * another way to deploy the same charge (Temporal's fastest: workers in the starting process, no ledger, none of
 * retrysafe's worker settings): only the server and the number of workers must agree.
 */
export type Measured = 'ledger' | 'observability' | 'shape';

export type Ratios = ReturnType<typeof ratios>;

export interface RoundRatios {
  /** The median over rounds of each round's ratio. */
  median: Ratios;
  /** The lowest and highest round's ratio of p50 and of throughput. */
  spread: { p50: [number, number]; throughput: [number, number] };
  rounds: number;
}

/** Why two legs must not be set side by side, or undefined when they may. */
export function incomparable(a: LegSetting, b: LegSetting, measures?: Measured): string | undefined {
  if (a.server !== b.server) return `they ran on different servers (${a.server}, ${b.server})`;
  if (a.workers !== b.workers) return `they ran on ${a.workers} and ${b.workers} workers`;
  if (measures === 'shape') return undefined;
  if ((a.inBenchProcess ?? false) !== (b.inBenchProcess ?? false)) {
    return 'one side ran its workers in the bench process and the other in their own';
  }
  const keys = [...new Set([...Object.keys(a.tuning), ...Object.keys(b.tuning)])].sort();
  const differing = keys.filter((k) => a.tuning[k] !== b.tuning[k]);
  if (differing.length) return `their workers differ in ${differing.join(', ')}`;
  if (a.ledger !== b.ledger && measures !== 'ledger') return 'one side kept the ledger and the other did not';
  if (a.observed !== b.observed && measures !== 'observability') {
    return 'one side exported metrics and traces and the other did not';
  }
  return undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  const m = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return Math.round(m * 100) / 100;
}

/** retrysafe ÷ bare per round (round i of one against round i of the other), then the median and the spread. */
export function roundRatios(retrysafe: readonly LatencyStats[], bare: readonly LatencyStats[]): RoundRatios {
  if (retrysafe.length !== bare.length || retrysafe.length === 0) {
    throw new Error(`ratios need the same number of rounds on both sides (${retrysafe.length}, ${bare.length})`);
  }
  const per = retrysafe.map((rs, i) => ratios(rs, bare[i]));
  const of = (k: keyof Ratios) => per.map((r) => r[k]);
  const range = (k: keyof Ratios): [number, number] => [Math.min(...of(k)), Math.max(...of(k))];
  return {
    median: {
      p50: median(of('p50')),
      p95: median(of('p95')),
      p99: median(of('p99')),
      throughput: median(of('throughput')),
    },
    spread: { p50: range('p50'), throughput: range('throughput') },
    rounds: per.length,
  };
}

/** `[min, max]` of one statistic over a leg's rounds, for the table. */
export function spreadOf(rounds: readonly LatencyStats[], k: 'p50' | 'p99' | 'throughputPerSec'): [number, number] {
  const values = rounds.map((r) => r[k]);
  return [Math.min(...values), Math.max(...values)];
}
