import assert from 'node:assert/strict';
import { unusedLedger } from '../support/unused-ledger';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActOnRecordActivity, dispatchesWithClaim, type ActOnRecordResult } from '../../activities/act-on-record';
import { createExecuteAction } from '../../activities/execute-action';
import { unrecordedRequests } from '../../client/unrecorded-requests';
import { openLedger, type ActionLedger } from '../../ledger';
import type { RowClaimRecord } from '../../ledger/action-ledger';
import type { DedupeCapability } from '../../policies/tool';
import { committed, type ToolOutcome } from '../../policies/tool-outcome';
import { scriptedTool } from '../support/scripted-tool';

/**
 * The record-first activity against a real SQLite ledger and a scripted provider, in the SDK's mock activity
 * context: which attempt may take the row from which, what a row left `planned` or `dispatching` by a dead attempt
 * lets the next one do, and that a stale attempt sends nothing. Sends are counted on the tool.
 */
describe('acting on the record: attempts and the row', () => {
  let dir: string;
  let ledger: ActionLedger;
  let n = 0;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-act-on-record-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(dir, 'ledger.sqlite') });
  });
  after(async () => {
    await ledger?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function setup(dedupe: DedupeCapability, outcomes: ToolOutcome[], rowLedger: ActionLedger = ledger) {
    const { tools, intent, calls } = scriptedTool({ name: 'ping', dedupe, outcomes });
    n += 1;
    const eventId = `e-${n}`;
    const owner = `run:acme:${eventId}`;
    const action = { key: `ping:v1:acme:${eventId}`, intent, requestHash: tools.hash(intent), tenant: 'acme', owner };
    const execute = createExecuteAction({
      ledger: unusedLedger(),
      tools,
      crash: () => undefined,
      sleep: async () => undefined,
    });
    const act = createActOnRecordActivity({
      tools,
      ledger: rowLedger,
      execute,
      crash: () => undefined,
    });
    /** One execution: `attempt` of the act as scheduled in the run's workflow task at history length `generation`. */
    const verdict = (attempt: number, generation = 7) =>
      new MockActivityEnvironment({ attempt }).run(act, {
        action,
        token: 'tok',
        generation,
      }) as Promise<ActOnRecordResult>;
    const run = async (attempt: number, generation = 7) => {
      const v = await verdict(attempt, generation);
      if (!('snapshot' in v)) throw new Error(`handed over: ${v.handOver}`);
      return v;
    };
    const holder = (attempt: number, generation = 7) => `run:${owner}/tok#${generation}.${attempt}`;
    /** The row claimed by another execution or holder, as the ledger takes a claim. */
    const claimedBy = (by: string, extra: Partial<RowClaimRecord> = {}) =>
      ledger.claimRow({
        key: action.key,
        tenant: 'acme',
        operation: 'ping',
        toolVersion: 1,
        requestHash: action.requestHash,
        owner,
        claimedAt: new Date().toISOString(),
        holder: by,
        ...extra,
      });
    /** The row as an earlier execution left it: claimed, and moved to `status` when that is not `planned`. */
    const leftBy = async (attempt: number, status: 'planned' | 'dispatching' | 'confirmed', generation = 7) => {
      const claimedAt = new Date().toISOString();
      await claimedBy(holder(attempt, generation), {
        claimedAt,
        leaseUntil: new Date(Date.now() + 60_000).toISOString(),
      });
      const by = holder(attempt, generation);
      await ledger.recordStatus({
        key: action.key,
        seq: 0,
        status: 'planned',
        at: claimedAt,
        reason: 'claimed',
        holder: by,
      });
      if (status === 'planned') return;
      await ledger.recordStatus({
        key: action.key,
        seq: 1,
        status: 'dispatching',
        at: claimedAt,
        reason: 'sent?',
        holder: by,
      });
      if (status === 'confirmed') {
        await ledger.recordStatus({
          key: action.key,
          seq: 2,
          status,
          at: claimedAt,
          reason: 'the provider committed',
          holder: by,
          providerRef: 'earlier-ref',
          settled: true,
        });
      }
    };
    return { action, calls, run, verdict, holder, leftBy, claimedBy };
  }

  /** The ledger, with its status writes and reads of the row counted. */
  function counting() {
    const statuses: string[] = [];
    let reads = 0;
    const counted = new Proxy(ledger, {
      get(target, prop, receiver) {
        if (prop === 'recordStatus') {
          return async (...args: Parameters<ActionLedger['recordStatus']>) => {
            statuses.push(args[0].status);
            return target.recordStatus(...args);
          };
        }
        if (prop === 'get') {
          return async (key: string) => {
            reads += 1;
            return target.get(key);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { counted, statuses, reads: () => reads };
  }

  it('settles a new row in one attempt: planned, dispatching, confirmed, held by that attempt', async () => {
    const t = setup('none', [committed('msg-1')]);
    const { snapshot, holder } = await t.run(1);
    assert.equal(snapshot.status, 'confirmed');
    assert.equal(snapshot.providerRef, 'msg-1');
    assert.equal(holder, t.holder(1));
    assert.equal(t.calls.execute, 1);
    const row = await ledger.get(t.action.key);
    assert.deepEqual([row?.status, row?.holder, row?.providerRef], ['confirmed', t.holder(1), 'msg-1']);
    assert.deepEqual(
      (await ledger.audit(t.action.key)).map((e) => e.status),
      ['planned', 'dispatching', 'confirmed'],
    );
  });

  it('takes a row an earlier attempt left planned and sends as the first, even without a key', async () => {
    const t = setup('none', [committed('msg-2')]);
    await t.leftBy(1, 'planned');
    const { snapshot } = await t.run(2);
    assert.equal(snapshot.status, 'confirmed');
    assert.equal(t.calls.execute, 1, 'nothing can have been sent while the row said planned');
    assert.equal((await ledger.get(t.action.key))?.holder, t.holder(2));
    assert.deepEqual(
      snapshot.audit.map((e) => e.to),
      ['planned', 'dispatching', 'confirmed'],
    );
  });

  it('resends with the key over a row an earlier attempt left dispatching', async () => {
    const t = setup('idempotency-key', [committed('ch-1', undefined, true)]);
    await t.leftBy(1, 'dispatching');
    const { snapshot } = await t.run(2);
    assert.equal(snapshot.status, 'confirmed');
    assert.equal(t.calls.execute, 1);
    const audit = await ledger.audit(t.action.key);
    assert.match(audit.find((e) => e.seq === 2)?.reason ?? '', /resend with the same key/);
  });

  it('never resends a key-less request over a row left dispatching: the row goes unknown, nothing is sent', async () => {
    const t = setup('none', []);
    await t.leftBy(1, 'dispatching');
    const v = await t.verdict(2);
    assert.ok('handOver' in v, 'unknown: the run hands the row to the action workflow');
    assert.equal(t.calls.execute, 0);
    const row = await ledger.get(t.action.key);
    assert.equal(row?.status, 'unknown');
    assert.ok(row?.leaseUntil && Date.parse(row.leaseUntil) <= Date.now(), 'the row was let go for a takeover');
  });

  it('stops a stale attempt: a later attempt of the act holds the row, so nothing is sent and nothing moves', async () => {
    const t = setup('idempotency-key', [committed('ch-2')]);
    await t.leftBy(3, 'dispatching');
    await assert.rejects(t.run(2), /tok#7\.3 holds the row .*tok#7\.2 is not later, so it is stale/);
    assert.equal(t.calls.execute, 0);
    assert.deepEqual(
      [(await ledger.get(t.action.key))?.holder, (await ledger.get(t.action.key))?.seq],
      [t.holder(3), 1],
    );
  });

  it('refuses another request under the key, naming both hashes, before anything is sent', async () => {
    const t = setup('none', [committed('msg-3')]);
    await t.claimedBy('action:other', { requestHash: 'f'.repeat(64) });
    await assert.rejects(t.run(1), (err: Error & { type?: string }) => {
      assert.equal(err.type, 'IntentMismatch');
      assert.match(err.message, /ffffffffffff…; this act carries/);
      return true;
    });
    assert.equal(t.calls.execute, 0);
  });

  it('fails before any send when the ledger is lost after the claim: the fence cannot write dispatching', async () => {
    // The ledger answers the claim (the row and its `planned` entry, one transaction), then goes away (a dropped
    // connection, a full disk).
    let writes = 0;
    const lost = new Proxy(ledger, {
      get(target, prop, receiver) {
        if (prop === 'recordStatus') {
          return async () => {
            writes += 1;
            throw new Error('connection to the ledger lost');
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const t = setup('none', [committed('msg-lost')], lost);
    await assert.rejects(t.run(1), /connection to the ledger lost/);
    assert.equal(t.calls.execute, 0, 'nothing was sent without its dispatching entry');
    const row = await ledger.get(t.action.key);
    assert.equal(row?.status, 'planned', 'the row still proves that nothing was sent');
    assert.equal(writes, 1, 'the one write after the claim was the fence');
    assert.deepEqual(
      (await ledger.audit(t.action.key)).map((e) => [e.seq, e.status]),
      [[0, 'planned']],
      'the claim wrote the planned entry with the row',
    );
  });

  it('writes a new row and its planned entry in one ledger write: no status write before the fence', async () => {
    const c = counting();
    const t = setup('none', [committed('msg-one')], c.counted);
    await t.run(1);
    // Key-less: the claim writes planned alone, and the fence writes dispatching before the send.
    assert.deepEqual(c.statuses, ['dispatching', 'confirmed']);
    assert.equal(c.reads(), 0);
    assert.deepEqual(
      (await ledger.audit(t.action.key)).map((e) => [e.seq, e.status]),
      [
        [0, 'planned'],
        [1, 'dispatching'],
        [2, 'confirmed'],
      ],
    );
  });

  describe('with a key the provider dedupes by, the claim writes dispatching too', () => {
    for (const dedupe of ['idempotency-key', 'transactional'] as const) {
      it(`${dedupe}: two ledger writes (the claim with planned and dispatching, then confirmed), the fence a read`, async () => {
        const c = counting();
        const t = setup(dedupe, [committed('ch-one')], c.counted);
        const { snapshot } = await t.run(1);
        assert.equal(snapshot.status, 'confirmed');
        assert.deepEqual(c.statuses, ['confirmed'], 'the one status write after the claim is the verdict');
        assert.equal(c.reads(), 1, 'the fence read the row back before the send');
        assert.deepEqual(
          (await ledger.audit(t.action.key)).map((e) => [e.seq, e.status]),
          [
            [0, 'planned'],
            [1, 'dispatching'],
            [2, 'confirmed'],
          ],
        );
        assert.deepEqual(
          snapshot.audit.map((e) => e.to),
          ['planned', 'dispatching', 'confirmed'],
        );
        assert.equal(unrecordedRequests(snapshot.audit, snapshot.requests), 0, 'the send is on record');
      });
    }

    it('only mutations under a key the provider keeps: never a read, a lookup or a key-less send', () => {
      const table = (['idempotency-key', 'transactional', 'lookup', 'none'] as const).map((dedupe) => [
        dedupe,
        dispatchesWithClaim({ kind: 'mutation', dedupe }),
        dispatchesWithClaim({ kind: 'read', dedupe }),
      ]);
      assert.deepEqual(table, [
        ['idempotency-key', true, false],
        ['transactional', true, false],
        ['lookup', false, false],
        ['none', false, false],
      ]);
    });

    it('sends nothing when the row was taken between the claim and the send: the fence reads another holder', async () => {
      let taken = false;
      const takenBeforeSend = new Proxy(ledger, {
        get(target, prop, receiver) {
          if (prop === 'get') {
            return async (key: string) => {
              // Another takes the row (the lease ran out while this execution stalled) just before the fence looks.
              const row = await target.get(key);
              if (row && !taken) {
                taken = true;
                await target.takeOver(key, row.epoch, 'action:the-action-workflow');
              }
              return target.get(key);
            };
          }
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const t = setup('idempotency-key', [committed('ch-stale')], takenBeforeSend);
      await assert.rejects(t.run(1), /no longer holds the row/);
      assert.equal(t.calls.execute, 0, 'nothing was sent');
      assert.equal((await ledger.get(t.action.key))?.holder, 'action:the-action-workflow');
    });

    it('a crash between the claim and the send leaves dispatching: the next execution resends with the key, once', async () => {
      const t = setup('idempotency-key', [committed('ch-after-claim')]);
      // The dead execution's claim, as act-on-record writes it for a keyed tool; it died before its send.
      await t.claimedBy(t.holder(1, 7), {
        leaseUntil: new Date(Date.now() + 60_000).toISOString(),
        planned: { reason: 'intent persisted' },
        dispatching: { reason: 'dispatch, by the run, on record with its claim' },
      });
      const { snapshot } = await t.run(1, 9);
      assert.equal(snapshot.status, 'confirmed');
      assert.equal(t.calls.execute, 1, 'one send, under the key');
      assert.deepEqual(
        (await ledger.audit(t.action.key)).map((e) => e.status),
        ['planned', 'dispatching', 'dispatching', 'confirmed'],
      );
      // The record cannot tell that the dead execution sent nothing: it shows its dispatch as possibly sent.
      assert.equal(unrecordedRequests(snapshot.audit, snapshot.requests), 1);
    });
  });

  describe('an act run again with its workflow task (a local activity after a crash: attempt 1 again, a later generation)', () => {
    it('takes the row from the dead generation and, without a key, sends nothing over dispatching', async () => {
      const t = setup('none', []);
      await t.leftBy(1, 'dispatching', 7);
      const v = await t.verdict(1, 12);
      assert.ok('handOver' in v, `unknown hands over, got ${JSON.stringify(v)}`);
      assert.equal(t.calls.execute, 0, 'attempt 1 again is not a first send: the row says dispatching');
      const row = await ledger.get(t.action.key);
      assert.deepEqual([row?.status, row?.holder], ['unknown', t.holder(1, 12)]);
    });

    it("resends with the key; the dead generation's possible send shows as unrecorded, from the row", async () => {
      const t = setup('idempotency-key', [committed('ch-g', undefined, true)]);
      await t.leftBy(1, 'dispatching', 7);
      const { snapshot, holder } = await t.run(1, 12);
      assert.equal(snapshot.status, 'confirmed');
      assert.equal(holder, t.holder(1, 12));
      assert.equal(t.calls.execute, 1);
      assert.equal(snapshot.sends, 1, 'the sends this execution made and recorded');
      assert.deepEqual(
        snapshot.audit.filter((e) => e.to === 'dispatching').length,
        2,
        "the dead generation's dispatch and this one's, both on the row",
      );
      assert.equal(unrecordedRequests(snapshot.audit, snapshot.requests), 1, 'one request may have gone unrecorded');
    });

    it('answers with the settled row and its holder when the dead generation settled it: nothing is sent', async () => {
      const t = setup('none', [committed('never')]);
      await t.leftBy(1, 'confirmed', 7);
      const { snapshot, holder } = await t.run(1, 12);
      assert.equal(snapshot.status, 'confirmed');
      assert.equal(snapshot.providerRef, 'earlier-ref');
      assert.equal(holder, t.holder(1, 7), "the run's later writes (an undo) are made as the settling holder");
      assert.equal(t.calls.execute, 0);
    });

    it('stops an execution of an earlier generation, whatever its attempt, once a later one holds the row', async () => {
      const t = setup('idempotency-key', [committed('ch-late')]);
      await t.leftBy(1, 'dispatching', 12);
      await assert.rejects(t.run(4, 7), /tok#12\.1 holds the row .*tok#7\.4 is not later/);
      assert.equal(t.calls.execute, 0);
      assert.equal((await ledger.get(t.action.key))?.holder, t.holder(1, 12));
    });
  });
});
