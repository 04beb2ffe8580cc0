import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { offsetLeaseClock, systemLeaseClock } from '../../activities/lease-clock';
import { createRecordLedger } from '../../activities/record-ledger';
import { ROW_LEASE_MS } from '../../activities/act-on-record';
import { openLedger, type ActionLedger } from '../../ledger';

/**
 * A worker's lease clock decides only when it may take a row from another run's act; the row's epoch fences every
 * write after that. A worker whose clock runs a lease ahead (`npm run chaos -- --faults clock-skew`) takes a live
 * act's row at once, and the act's next write as holder is refused.
 */
describe('the lease clock', () => {
  let dir: string;
  let ledger: ActionLedger;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-lease-clock-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(dir, 'ledger.sqlite') });
  });
  after(async () => {
    await ledger?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function rowHeldByALiveAct(key: string, runHolder: string) {
    const claimedAt = new Date().toISOString();
    const base = { key, tenant: 'acme', operation: 'ping', toolVersion: 1, requestHash: 'h', owner: 'run:acme:x' };
    await ledger.claimRow({
      ...base,
      claimedAt,
      holder: runHolder,
      leaseUntil: new Date(Date.now() + ROW_LEASE_MS).toISOString(),
    });
    const claim = { key, tenant: 'acme', requestHash: 'h', owner: 'run:acme:x', claimedAt, holder: 'action:r1' };
    return claim;
  }

  it("keeps off a live act's row by the machine's clock", async () => {
    const claim = await rowHeldByALiveAct('ping:v1:acme:on-time', 'run:run:acme:on-time/tok#1.1');
    const answer = await createRecordLedger({ ledger, leaseClock: systemLeaseClock }).claimLedgerRow(claim);
    assert.equal(answer.kind, 'busy');
  });

  it("takes a live act's row at once with a clock a lease ahead, and the act's next write is refused", async () => {
    const runHolder = 'run:run:acme:skewed/tok#1.1';
    const claim = await rowHeldByALiveAct('ping:v1:acme:skewed', runHolder);
    const skewed = createRecordLedger({ ledger, leaseClock: offsetLeaseClock(ROW_LEASE_MS + 1_000) });
    const answer = await skewed.claimLedgerRow(claim);
    assert.equal(answer.kind, 'handed-over', 'by its clock, the lease had ended');
    const late = await ledger.recordStatus({
      key: claim.key,
      seq: 0,
      status: 'planned',
      at: new Date().toISOString(),
      reason: 'intent persisted',
      holder: runHolder,
    });
    assert.equal(late.applied, false, 'the act no longer holds the row: its write is fenced by the epoch');
    assert.equal((await ledger.get(claim.key))?.holder, 'action:r1');
  });

  it('is the machine clock with no offset, and runs ahead or behind by the offset given', () => {
    assert.equal(offsetLeaseClock(0), systemLeaseClock);
    const ahead = offsetLeaseClock(5_000)() - Date.now();
    const behind = offsetLeaseClock(-5_000)() - Date.now();
    assert.ok(ahead >= 4_990 && ahead <= 5_010, `ahead by ${ahead}`);
    assert.ok(behind >= -5_010 && behind <= -4_990, `behind by ${behind}`);
  });
});
