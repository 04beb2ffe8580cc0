import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSettleRecord } from '../../activities/settle-record';
import { openLedger, type ActionLedger } from '../../ledger';

/**
 * A run settles a row its act confirmed (no action workflow) with the settleRecord activity, as the run's holder: the
 * same holder for every attempt. A first attempt that stalls past the activity's timeout (its worker paused) and
 * wakes after its retry and the run's next settlement have run must not move the row back (found by
 * `npm run chaos -- --faults all --seed 20261214`, iteration 3: a reservation left `compensating` after its release).
 */
describe('settleRecord: a stale attempt does not move a settled row back', () => {
  let dir: string;
  let ledger: ActionLedger;
  const key = 'reserve:v1:acme:evt-3';
  const holder = 'run:run:acme:evt-3/tok#1';
  const by = 'run:acme:evt-3';

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-settle-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(dir, 'ledger.sqlite') });
    const at = () => new Date().toISOString();
    await ledger.claimRow({
      key,
      tenant: 'acme',
      operation: 'reserve',
      toolVersion: 1,
      requestHash: 'h',
      owner: by,
      claimedAt: at(),
      holder,
      planned: { reason: 'intent persisted' },
    });
    for (const [seq, status, reason] of [
      [1, 'dispatching', 'dispatch, by the run'],
      [2, 'confirmed', 'provider send: rsv_1'],
    ] as const) {
      const w = await ledger.recordStatus({ key, seq, status, at: at(), reason, holder, providerRef: 'rsv_1' });
      assert.equal(w.applied, true);
    }
  });
  after(async () => {
    await ledger?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('takes compensating then compensated, and a late compensating leaves the row compensated', async () => {
    const { settleRecord } = createSettleRecord({ ledger });
    const settle = (state: 'compensating' | 'compensated') =>
      settleRecord({ key, tenant: 'acme', holder, by, state, compensationKey: 'release:v1:acme:evt-3' });

    assert.equal((await settle('compensating'))?.status, 'compensating');
    assert.equal((await settle('compensated'))?.status, 'compensated');
    // The stalled first attempt of the `compensating` settlement wakes now.
    const late = await settle('compensating');
    assert.equal(late?.status, 'compensated', 'the row stays settled');
    const trail = await ledger.audit(key);
    assert.deepEqual(
      trail.map((e) => `${e.seq} ${e.status}`),
      ['0 planned', '1 dispatching', '2 confirmed', '3 compensating', '4 compensated'],
    );
    assert.equal((await ledger.get(key))?.status, 'compensated');
  });

  it('repeats nothing when a retried attempt finds its move already made', async () => {
    const { settleRecord } = createSettleRecord({ ledger });
    const again = await settleRecord({ key, tenant: 'acme', holder, by, state: 'compensated' });
    assert.equal(again?.status, 'compensated');
    assert.equal((await ledger.audit(key)).length, 5);
  });
});
