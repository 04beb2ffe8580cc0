import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseScaleArgs } from '../../scripts/bench/scale/args';
import { describeHealth, emptyHealth, tally } from '../../scripts/bench/scale/burst-health';
import type { ConcurrentReport } from '../../scripts/bench/scale/concurrent';
import { drift, growthOf } from '../../scripts/bench/scale/growth';
import { burstRatio } from '../../scripts/bench/scale/run';
import { UsageError } from '../../cli/ops/errors';

describe('bench:scale: how a cost grows with size', () => {
  it('fits the exponent of cost ≈ size^b: flat, linear, quadratic', () => {
    const sizes = [100, 300, 1000, 3000];
    assert.equal(growthOf(sizes.map((size) => ({ size, cost: 42 })))?.exponent, 0);
    const linear = growthOf(sizes.map((size) => ({ size, cost: 3 * size })));
    assert.deepEqual(linear, { exponent: 1, superlinear: false });
    const quadratic = growthOf(sizes.map((size) => ({ size, cost: size * size })));
    assert.deepEqual(quadratic, { exponent: 2, superlinear: true });
  });

  it('flags only what grows past the threshold, and needs two sizes', () => {
    const grown = (b: number) =>
      growthOf([
        { size: 10, cost: 10 },
        { size: 100, cost: 10 * 10 ** b },
      ]);
    assert.deepEqual(grown(1.1), { exponent: 1.1, superlinear: false });
    assert.deepEqual(grown(1.3), { exponent: 1.3, superlinear: true });
    assert.equal(growthOf([{ size: 10, cost: 1 }]), undefined);
    assert.equal(
      growthOf([
        { size: 10, cost: 1 },
        { size: 10, cost: 2 },
      ]),
      undefined,
      'one size twice is not a trend',
    );
    assert.equal(
      growthOf([
        { size: 0, cost: 5 },
        { size: 10, cost: 0 },
      ]),
      undefined,
      'zeros have no logarithm',
    );
  });

  it('compares the first and last ten values of a series', () => {
    const flat = Array.from({ length: 100 }, () => 250);
    assert.deepEqual(drift(flat), { first: 250, last: 250, ratio: 1 });
    const rising = Array.from({ length: 100 }, (_, i) => 100 + 10 * i);
    const d = drift(rising)!;
    assert.equal(d.first, 145);
    assert.equal(d.last, 1045);
    assert.equal(d.ratio, 7.21);
    assert.equal(drift(flat.slice(0, 15)), undefined, 'fewer than two tens');
  });

  it('parses its arguments, naming the flag that is wrong', () => {
    const args = parseScaleArgs([]);
    assert.equal(args['long-run'], 100);
    assert.deepEqual(args.concurrent, [100, 300, 1000]);
    assert.equal(args.queue, 10_000);
    assert.deepEqual(parseScaleArgs(['--concurrent', '10,20', '--queue', '0']).concurrent, [10, 20]);
    assert.equal(args.rounds, 2);
    assert.equal(parseScaleArgs(['--rounds', '4']).rounds, 4);
    assert.throws(
      () => parseScaleArgs(['--rounds', '0']),
      (e: unknown) => e instanceof UsageError && /rounds/.test(e.message),
    );
    assert.throws(
      () => parseScaleArgs(['--concurrent', '10;20']),
      (e: unknown) => e instanceof UsageError && /concurrent/.test(e.message),
    );
    assert.throws(
      () => parseScaleArgs(['--long-run', '-1']),
      (e: unknown) => e instanceof UsageError && /long-run/.test(e.message),
    );
  });

  /** A burst report with what a ratio reads: its size, wall time and CPU per action. */
  const burstOf = (actions: number, wallMs: number, cpuMsPerAction?: Record<string, number>): ConcurrentReport => ({
    side: 'retrysafe',
    actions,
    confirmed: actions,
    p50: 0,
    p99: 0,
    max: 0,
    wallMs,
    throughputPerSec: Math.round((actions / wallMs) * 1000 * 10) / 10,
    ...(cpuMsPerAction ? { cpuMsPerAction } : {}),
  });

  it("takes a size's ratio over all its rounds, each side's actions over its summed wall time", () => {
    const burst = (actions: number, wallMs: number) => burstOf(actions, wallMs);
    // 1000 in 40 s and 1000 in 50 s (22.2/s overall) against 1000 in 40 s twice (25/s).
    const r = burstRatio([burst(1000, 40_000), burst(1000, 50_000)], [burst(1000, 40_000), burst(1000, 40_000)]);
    assert.deepEqual(r, { actions: 1000, rounds: 2, throughputRatio: 0.89, perRound: [1, 0.8] });
    assert.throws(() => burstRatio([burst(10, 1)], []), /1 retrysafe bursts against 0 bare/);
  });

  it('gives CPU per action by process over all rounds, weighted by actions, only where every burst counted', () => {
    const burst = (actions: number, cpuMsPerAction?: Record<string, number>) => burstOf(actions, 1000, cpuMsPerAction);
    const r = burstRatio(
      [burst(100, { server: 10, worker: 20, total: 30 }), burst(300, { server: 14, worker: 16, total: 30 })],
      [burst(100, { server: 20, worker: 5, client: 1, total: 26 }), burst(300, { server: 20, worker: 5, total: 25 })],
    );
    assert.deepEqual(r.cpuMsPerAction, {
      retrysafe: { server: 13, worker: 17, total: 30 },
      // The client was counted in one bare burst only: left out, not averaged as if it were zero in the other.
      bare: { server: 20, worker: 5, total: 25.25 },
    });
    const uncounted = burstRatio([burst(100, { total: 1, worker: 1 })], [burst(100)]);
    assert.equal(uncounted.cpuMsPerAction, undefined, 'a side with a burst that counted nothing has no figure');
  });

  it("tallies what a burst's histories show besides the happy path", () => {
    const health = emptyHealth(2);
    tally(health, [
      {
        eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
        activityTaskScheduledEventAttributes: { activityType: { name: 'actOnRecord' } },
      },
      {
        eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED',
        activityTaskStartedEventAttributes: {
          attempt: 2,
          lastFailure: { timeoutFailureInfo: { timeoutType: 'TIMEOUT_TYPE_HEARTBEAT' } },
        },
      },
      { eventType: 'EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT' },
    ]);
    tally(health, [
      {
        eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
        activityTaskScheduledEventAttributes: { activityType: { name: 'actOnRecord' } },
      },
      { eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED', activityTaskStartedEventAttributes: { attempt: 1 } },
      { eventType: 'EVENT_TYPE_WORKFLOW_TASK_FAILED' },
    ]);
    assert.equal(health.retriedActivities, 1);
    assert.deepEqual(health.retriedBecause, { 'heartbeat timeout': 1 });
    assert.deepEqual(health.activities, { actOnRecord: 2 });
    assert.equal(health.workflowTaskTimeouts, 1);
    assert.equal(health.workflowTaskFailures, 1);
    assert.match(describeHealth(health), /retried activities 1 \(1 heartbeat timeout\)/);
  });
});
