import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peerRatios, type PeerLeg } from '../../scripts/bench/peers/ratios';
import { summarize } from '../../scripts/bench/stats';

/** A leg whose every sample is `ms` at each level. */
function leg(system: string, operation: PeerLeg['operation'], seq: number, c10: number): PeerLeg {
  const stats = { seq: summarize([seq, seq, seq], 100), c10: summarize([c10, c10, c10], 100) };
  return { system, operation, stats, rounds: { seq: [stats.seq], c10: [stats.c10] } };
}

describe('bench:peers ratios', () => {
  it("sets each Temporal system's p50 over each peer's, by operation and level", () => {
    const r = peerRatios([
      leg('retrysafe', 'charge', 52, 330),
      leg('retrysafe, eager start', 'charge', 33, 200),
      leg('dbos', 'charge', 22, 88),
      leg('restate', 'charge', 15, 80),
      leg('retrysafe', 'renewal', 106, 500),
      leg('dbos', 'renewal', 47, 150),
    ]);
    assert.deepEqual(r.charge.retrysafe, { dbos: { seq: 2.36, c10: 3.75 }, restate: { seq: 3.47, c10: 4.13 } });
    assert.deepEqual(r.charge['retrysafe, eager start'].dbos, { seq: 1.5, c10: 2.27 });
    // Only the legs that exist: no Restate renewal here, no eager renewal.
    assert.deepEqual(r.renewal, { retrysafe: { dbos: { seq: 2.26, c10: 3.33 } } });
  });

  it('leaves out a level whose peer p50 is 0 rather than dividing by it', () => {
    const r = peerRatios([leg('retrysafe', 'charge', 50, 300), leg('dbos', 'charge', 0, 90)]);
    assert.deepEqual(r.charge.retrysafe.dbos, { c10: 3.33 });
  });
});
