import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import { lostReplies } from '../../scripts/chaos/scenario-email-no-key';
import type { CrashRecord } from '../../scripts/chaos/types';

const emailNoKey = scenarioByName('email-no-key')!;
const committed = (faults: Array<'drop-after-commit' | 'status-after-commit'> = [], status = 200) => ({
  outcome: 'committed' as const,
  faults,
  status,
});
const kill = (mode: CrashRecord['mode'], over: Partial<CrashRecord> = {}): CrashRecord => ({
  mode,
  pid: 1,
  signal: 'SIGKILL',
  pointReached: true,
  atMs: 10,
  ...over,
});

/**
 * The email-no-key scenario's expectations (a review is required; how many sends may precede it) follow from what
 * was observed, the kill the harness saw land, the fault it saw hit, the provider's log, never from the plan's draw.
 */
describe('chaos email-no-key: expectations from observed facts', () => {
  it('a reply toxic that hit requires a review after one send, whatever crash mode the plan kept', () => {
    // Under --faults the plan keeps the crash mode it drew (here looked for: before-send), though no kill happens.
    const plan = Array.from({ length: 400 }, (_, i) =>
      planIteration(20261205, i, emailNoKey, { restartRate: 0, faults: ['provider-reset'] }),
    ).find((p) => p.crash.mode === 'before-send')!;
    assert.ok(plan, 'a plan that drew before-send');
    const lost = lostReplies({
      observed: { fault: { kind: plan.fault!.kind, injected: true, atMs: 10 } },
      requests: [committed()],
    });
    assert.deepEqual(lost, { afterCommit: ['the reply met provider-reset'] });
  });

  it('a fault that did not hit, a missed point, a spared worker or a random-time kill require nothing', () => {
    const none = { afterCommit: [] };
    assert.deepEqual(
      lostReplies({ observed: { fault: { kind: 'provider-timeout', injected: false, atMs: 1 } }, requests: [] }),
      none,
    );
    assert.deepEqual(
      lostReplies({ observed: { crash: kill('in-flight', { pointReached: false }) }, requests: [committed()] }),
      none,
    );
    assert.deepEqual(
      lostReplies({
        observed: { crash: kill('in-flight', { workerSpared: true, signal: null }) },
        requests: [committed()],
      }),
      none,
    );
    assert.deepEqual(lostReplies({ observed: { crash: kill('random-time') }, requests: [committed()] }), none);
    assert.deepEqual(
      lostReplies({ observed: { fault: { kind: 'worker-pause', injected: true, atMs: 1 } }, requests: [committed()] }),
      none,
    );
  });

  it('a kill that landed after the commit, or the provider losing its own reply, requires a review after one send', () => {
    for (const mode of ['in-flight', 'after-commit', 'gateway-error'] as const) {
      assert.deepEqual(lostReplies({ observed: { crash: kill(mode) }, requests: [committed()] }).afterCommit, [
        `the worker was killed at ${mode}`,
      ]);
    }
    assert.deepEqual(lostReplies({ observed: {}, requests: [committed(['status-after-commit'], 502)] }), {
      afterCommit: ['the provider answered 502 after committing'],
    });
    assert.deepEqual(lostReplies({ observed: {}, requests: [committed(['drop-after-commit'])] }), {
      afterCommit: ['the provider dropped its reply after committing'],
    });
    // A request stopped before its commit lost nothing.
    assert.deepEqual(
      lostReplies({ observed: {}, requests: [{ outcome: 'fault:status-5xx', faults: ['status-5xx'], status: 503 }] }),
      { afterCommit: [] },
    );
  });

  it('a kill before the send requires a review with nothing sent before it', () => {
    assert.deepEqual(lostReplies({ observed: { crash: kill('before-send') }, requests: [] }), {
      afterCommit: [],
      beforeSend: 'the worker holding the attempt was killed before its send',
    });
  });
});
