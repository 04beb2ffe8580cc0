import type { LatencyStats } from '../stats';

/** One system's timings for one operation, as the peers bench records them and its ratios read them. */
export interface PeerLeg {
  system: string;
  operation: 'charge' | 'renewal';
  /** By load level (`seq`, `c<K>`): every round's operations together, and each round on its own. */
  stats: Record<string, LatencyStats>;
  rounds: Record<string, LatencyStats[]>;
}

/** The systems of Temporal whose p50 the report sets against each peer's. */
export const TEMPORAL_SYSTEMS = ['retrysafe', 'retrysafe, eager start', 'bare Temporal activity'] as const;
export const PEER_SYSTEMS = ['dbos', 'restate'] as const;

/**
 * `ratios[operation][system][peer][level]`: the system's p50 ÷ the peer's, over every round, rounded to two decimals
 * (×1.5 is issue 45's target for the keyed charge against DBOS). Absent where either leg is missing or the peer's
 * p50 is 0.
 */
export type PeerRatios = Record<string, Record<string, Record<string, Record<string, number>>>>;

export function peerRatios(legs: readonly PeerLeg[]): PeerRatios {
  const out: PeerRatios = {};
  const find = (system: string, operation: string) =>
    legs.find((l) => l.system === system && l.operation === operation);
  for (const operation of new Set(legs.map((l) => l.operation))) {
    for (const system of TEMPORAL_SYSTEMS) {
      const ours = find(system, operation);
      if (!ours) continue;
      for (const peer of PEER_SYSTEMS) {
        const theirs = find(peer, operation);
        if (!theirs) continue;
        for (const [level, s] of Object.entries(ours.stats)) {
          const p = theirs.stats[level]?.p50;
          if (!p) continue;
          ((out[operation] ??= {})[system] ??= {})[peer] ??= {};
          out[operation][system][peer][level] = Math.round((s.p50 / p) * 100) / 100;
        }
      }
    }
  }
  return out;
}
