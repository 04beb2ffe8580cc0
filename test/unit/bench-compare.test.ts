import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { incomparable, roundRatios, spreadOf, type LegSetting } from '../../scripts/bench/compare';
import { pairRatios, type LegReport } from '../../scripts/bench/run';
import { summarize } from '../../scripts/bench/stats';

const setting = (over: Partial<LegSetting> = {}): LegSetting => ({
  server: '127.0.0.1:7233 (default)',
  taskQueue: 'bench',
  workers: 2,
  tuning: { RETRYSAFE_APPROVAL_PUBLIC_KEYS: 'ab12' },
  ledger: false,
  observed: false,
  ...over,
});
/** A round whose every operation took `ms`, `n` of them over `wallMs`. */
const round = (ms: number, wallMs = 1_000, n = 10) =>
  summarize(
    Array.from({ length: n }, () => ms),
    wallMs,
  );

describe('bench comparisons', () => {
  it('set two legs side by side only on one server, one worker count and one worker setting', () => {
    assert.equal(incomparable(setting(), setting({ taskQueue: 'other' })), undefined);
    assert.match(incomparable(setting(), setting({ server: '127.0.0.1:7234 (default)' }))!, /different servers/);
    assert.match(incomparable(setting(), setting({ workers: 1 }))!, /on 2 and 1 workers/);
    assert.match(
      incomparable(setting(), setting({ tuning: { RETRYSAFE_APPROVAL_PUBLIC_KEYS: 'cd34' } }))!,
      /differ in RETRYSAFE_APPROVAL_PUBLIC_KEYS/,
    );
    assert.match(incomparable(setting(), setting({ ledger: true }))!, /kept the ledger/);
    assert.equal(
      incomparable(setting(), setting({ ledger: true }), 'ledger'),
      undefined,
      'what the comparison measures',
    );
    const observed = setting({ ledger: true, observed: true });
    assert.match(incomparable(setting({ ledger: true }), observed)!, /exported metrics and traces/);
    assert.match(incomparable(setting(), observed, 'observability')!, /kept the ledger/, 'one setting at a time');
    assert.equal(incomparable(setting({ ledger: true }), observed, 'observability'), undefined);
  });

  it('take a ratio per round and report the median with the lowest and highest round', () => {
    const rs = [round(300, 1_000), round(330, 1_100), round(600, 2_000)];
    const bare = [round(100, 500), round(100, 500), round(200, 600)];
    const r = roundRatios(rs, bare);
    // Per round ×3, ×3.3, ×3: the median is ×3, where the pooled samples' p50s (330 ÷ 100) would say ×3.3.
    assert.deepEqual(r.spread.p50, [3, 3.3]);
    assert.equal(r.median.p50, 3);
    assert.equal(r.rounds, 3);
    // 10/s ÷ 20/s, 9.1/s ÷ 20/s (×0.45), 5/s ÷ 16.7/s.
    assert.deepEqual(r.spread.throughput, [0.3, 0.5]);
    assert.equal(r.median.throughput, 0.45);
    assert.throws(() => roundRatios(rs, bare.slice(0, 2)), /same number of rounds/);
    assert.deepEqual(spreadOf(rs, 'p50'), [300, 600]);
  });

  it('refuse a ratio between legs that ran on different servers, and say why', () => {
    const leg = (id: string, side: 'bare' | 'retrysafe', s: LegSetting, ms: number): LegReport => ({
      id,
      label: id,
      side,
      setting: s,
      stats: { seq: round(ms) },
      rounds: { seq: [round(ms), round(ms)] },
      samples: {},
    });
    const levels: Array<[string, number]> = [['seq', 1]];
    const same = pairRatios(
      [leg('bare-activity', 'bare', setting(), 100), leg('retrysafe-action', 'retrysafe', setting(), 250)],
      levels,
    );
    assert.deepEqual(same.action.seq, {
      median: { p50: 2.5, p95: 2.5, p99: 2.5, throughput: 1 },
      spread: { p50: [2.5, 2.5], throughput: [1, 1] },
      rounds: 2,
    });
    const apart = pairRatios(
      [
        leg('bare-activity', 'bare', setting(), 100),
        leg('retrysafe-action', 'retrysafe', setting({ server: 'cloud:7233 (ns)' }), 250),
      ],
      levels,
    );
    assert.deepEqual(apart.action.seq, {
      refused: 'they ran on different servers (cloud:7233 (ns), 127.0.0.1:7233 (default))',
    });
  });
});
