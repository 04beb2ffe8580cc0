import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRecordLedger } from '../../activities/record-ledger';
import { openLedger, type ActionLedger } from '../../ledger';

/**
 * A takeover is a compare-and-swap on the epoch only, so the holder it displaces may still write statuses between
 * the taker's read of the row and its swap: a run's act whose lease has just run out writes `dispatching` and sends.
 * What the taker then does with the key must follow the row it took, not the row it read before (found by the
 * ledger protocol's model test, test/integration/ledger-protocol.test.ts).
 */
describe('a takeover reads the row it took', () => {
  let dir: string;
  let ledger: ActionLedger;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-takeover-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(dir, 'ledger.sqlite') });
  });
  after(async () => {
    await ledger?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('hands over `dispatching` when the act wrote it between the read and the swap', async () => {
    const key = 'ping:v1:acme:late-dispatch';
    const runHolder = 'run:run:acme:late-dispatch/tok#1';
    const claimedAt = new Date(Date.now() - 60_000).toISOString();
    const base = { key, tenant: 'acme', operation: 'ping', toolVersion: 1, requestHash: 'h', owner: 'run:acme:x' };
    // The run's act claimed the row with a lease that has run out, and has not written anything since.
    await ledger.claimRow({
      ...base,
      claimedAt,
      holder: runHolder,
      leaseUntil: new Date(Date.now() - 1).toISOString(),
    });

    // The act wakes up and writes `dispatching` (then sends) after the taker read `planned`, before its swap.
    const racing: ActionLedger = Object.create(ledger) as ActionLedger;
    racing.takeOver = async (k, epoch, holder, leaseUntil) => {
      const woke = await ledger.recordStatus({
        key,
        seq: 1,
        status: 'dispatching',
        at: new Date().toISOString(),
        reason: 'dispatch, by the run',
        holder: runHolder,
      });
      assert.equal(woke.applied, true, 'the act still held the row');
      return ledger.takeOver(k, epoch, holder, leaseUntil);
    };

    const { claimLedgerRow } = createRecordLedger({ ledger: racing });
    const claim = await claimLedgerRow({
      key,
      tenant: 'acme',
      requestHash: 'h',
      owner: 'run:acme:x',
      claimedAt,
      holder: 'action:r1',
    });

    assert.equal(claim.kind, 'handed-over');
    assert.ok(claim.kind === 'handed-over');
    assert.equal(
      claim.from.status,
      'dispatching',
      'a request may have reached the provider: reconcile, never send fresh',
    );
    assert.equal(claim.from.seq, 1, "the taker's entries are numbered after the act's");
    assert.equal(claim.from.holder, runHolder, 'the row was taken from the act');
  });
});
