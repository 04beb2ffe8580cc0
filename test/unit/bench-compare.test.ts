import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { incomparable, roundRatios, spreadOf, type LegSetting, type RoundRatios } from '../../scripts/bench/compare';
import { formatBench } from '../../scripts/bench/format';
import { COMPARISONS, assertEager } from '../../scripts/bench/legs';
import { benchJson, pairRatios, type BenchReport, type LegReport } from '../../scripts/bench/run';
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

describe("the bench's baselines", () => {
  const levels: Array<[string, number]> = [
    ['seq', 1],
    ['c10', 10],
  ];
  const spawned = setting({ ledger: true });
  // Temporal's fastest shape: its workers in the bench process (with the plugin and the ledger for retrysafe's eager
  // leg), none of the worker processes' settings.
  const inProcess = setting({ taskQueue: 'bench-eager', tuning: {}, inBenchProcess: true });
  const leg = (id: string, side: 'bare' | 'retrysafe', s: LegSetting, seq: number, c10: number): LegReport => ({
    id,
    label: id,
    side,
    setting: s,
    stats: { seq: round(seq), c10: round(c10) },
    rounds: { seq: [round(seq), round(seq * 2)], c10: [round(c10), round(c10)] },
    samples: { seq: [seq], c10: [c10] },
  });
  const report = (legs: LegReport[]): BenchReport => ({
    iterations: 10,
    concurrency: 10,
    repeats: 2,
    machine: 'test',
    legs,
    skipped: [],
    ratios: pairRatios(legs, levels),
    recovery: { heartbeatTimeoutMs: 2_000, workflowTaskTimeoutMs: 3_000 },
    chart: '.out/bench/latency.svg',
    durationMs: 1,
    observe: 'both',
  });

  it('set the action against the bare activity and against the local activity started eagerly, seq and c10', () => {
    const json = JSON.parse(
      benchJson(
        report([
          leg('bare-activity', 'bare', spawned, 100, 200),
          leg('bare-local-eager', 'bare', inProcess, 50, 80),
          leg('retrysafe-action', 'retrysafe', spawned, 110, 240),
          leg('retrysafe-action-eager', 'retrysafe', inProcess, 110, 240),
        ]),
      ),
    ) as { ratios: Record<string, Record<string, RoundRatios>>; legs: Array<Record<string, unknown>> };
    assert.equal(json.ratios.action.seq.median.p50, 1.1);
    assert.equal(json.ratios.action.c10.median.p50, 1.2);
    assert.ok(json.ratios['action-vs-fastest'], 'ratios["action-vs-fastest"] is in the JSON');
    assert.deepEqual(json.ratios['action-vs-fastest'].seq.median, { p50: 2.2, p95: 2.2, p99: 2.2, throughput: 1 });
    assert.equal(json.ratios['action-vs-fastest'].c10.median.p50, 3);
    assert.deepEqual(json.ratios['action-vs-fastest'].seq.spread.p50, [2.2, 2.2]);
    assert.equal(json.ratios['action-vs-fastest'].c10.rounds, 2);
    assert.equal(json.ratios['action-eager-vs-bare'].seq.median.p50, 1.1, 'the eager action against the bare activity');
    assert.ok(
      json.legs.every((l) => !('samples' in l)),
      'samples stay in the chart',
    );
  });

  it('print both action ratios and how many starts were eager', () => {
    const eager = { ...leg('bare-local-eager', 'bare', inProcess, 50, 80), eagerStarts: { requested: 10, eager: 9 } };
    const lines = formatBench(
      report([
        leg('bare-activity', 'bare', spawned, 100, 200),
        eager,
        leg('retrysafe-action', 'retrysafe', spawned, 110, 240),
        leg('retrysafe-action-eager', 'retrysafe', inProcess, 110, 240),
      ]),
    );
    const starting = (prefix: string) => lines.filter((l) => l.startsWith(prefix));
    assert.equal(starting('retrysafe/bare (action, ').length, 2, 'seq and c10');
    assert.match(starting('retrysafe/bare (action, seq)')[0], /p50 ×1\.1 /);
    assert.equal(starting("retrysafe/Temporal's fastest shape (action-vs-fastest, ").length, 2, 'seq and c10');
    assert.match(starting("retrysafe/Temporal's fastest shape (action-vs-fastest, c10)")[0], /p50 ×3 /);
    assert.ok(lines.includes('eager starts, bare-local-eager: 9 of 10 measured starts'), lines.join('\n'));
  });

  it("print each leg's CPU per operation and set compared legs' CPU against each other", () => {
    const withCpu = (l: ReturnType<typeof leg>, seq: Record<string, number>) => ({
      ...l,
      cpuMsPerOperation: { seq },
    });
    const lines = formatBench(
      report([
        withCpu(leg('retrysafe-action', 'retrysafe', spawned, 110, 240), {
          server: 4,
          workers: 8,
          bench: 1,
          total: 13,
        }),
        withCpu(leg('retrysafe-action-observed', 'retrysafe', spawned, 120, 250), {
          server: 4,
          workers: 10,
          bench: 1.2,
          total: 15.2,
        }),
      ]),
    );
    assert.ok(
      lines.includes('CPU per operation, retrysafe-action [seq]: server 4 + workers 8 + bench 1 = 13 ms'),
      lines.join('\n'),
    );
    assert.ok(
      lines.includes(
        'CPU per operation, retrysafe-action-observed ÷ retrysafe-action (observability, seq): ×1.17 ' +
          '(server ×1, workers ×1.25, bench ×1.2)',
      ),
      lines.join('\n'),
    );
    assert.ok(!lines.some((l) => l.includes('[c10]')), 'no figure for a level that was not counted');
  });

  it('compare the fastest shape on server and worker count, and nothing else against its shape', () => {
    assert.equal(incomparable(spawned, inProcess, 'shape'), undefined);
    assert.match(incomparable(spawned, setting({ ...inProcess, workers: 1 }), 'shape')!, /on 2 and 1 workers/);
    assert.match(incomparable(spawned, { ...inProcess, server: 'cloud:7233 (ns)' }, 'shape')!, /different servers/);
    // Any other comparison refuses workers in the bench process against workers in their own.
    assert.match(
      incomparable(setting(), setting({ inBenchProcess: true }))!,
      /in the bench process and the other in their own/,
    );
    const [refused] = Object.values(
      pairRatios(
        [
          leg('bare-local-eager', 'bare', { ...inProcess, workers: 1 }, 50, 80),
          leg('retrysafe-action-eager', 'retrysafe', inProcess, 110, 240),
        ],
        levels,
      ),
    );
    assert.deepEqual(refused.seq, { refused: 'they ran on 2 and 1 workers' });
  });

  it('name the fastest-shape comparison by its legs, and fail the leg whose starts were none of them eager', () => {
    assert.deepEqual(
      COMPARISONS.find((c) => c.name === 'action-vs-fastest'),
      { name: 'action-vs-fastest', bare: 'bare-local-eager', retrysafe: 'retrysafe-action-eager', measures: 'shape' },
    );
    assert.throws(() => assertEager('bare-local-eager', { requested: 10, eager: 0 }), /none of 10 starts was eager/);
    assert.doesNotThrow(() => assertEager('bare-local-eager', { requested: 10, eager: 3 }));
  });
});
