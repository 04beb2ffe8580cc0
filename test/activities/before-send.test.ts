import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ApprovalToRecheck } from '../../activities/before-send';
import { createExecuteAction, type ExecuteInput, type ExecuteOutcome } from '../../activities/execute-action';
import type { VolatilePolicy } from '../../activities/load-action-policy';
import type { RecordLedgerInput } from '../../activities/record-ledger';
import { openLedger, type ActionLedger } from '../../ledger';
import { errorCodeOf, errorDetailsOf } from '../../policies/errors';
import { committed } from '../../policies/tool-outcome';
import { scriptedTool } from '../support/scripted-tool';

/**
 * What the executor settles before it sends for an action workflow: the approval checked once more against the
 * worker's trust now, and the workflow's `dispatching` entry written to the row it holds. A real SQLite ledger and a
 * scripted provider in the SDK's mock activity context; sends are counted on the tool, and the row is read at the
 * moment the provider is called.
 */
describe('before the executor sends: the approval re-checked, the dispatching entry written', () => {
  let dir: string;
  let ledger: ActionLedger;
  let n = 0;
  const NOW = Date.parse('2026-12-04T12:00:00.000Z');

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-before-send-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(dir, 'ledger.sqlite') });
  });
  after(async () => {
    await ledger?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function setup(
    trusted: Record<string, string> = { k1: 'aa' },
    dedupe: 'idempotency-key' | 'none' = 'idempotency-key',
    rowStore: ActionLedger = ledger,
  ) {
    n += 1;
    const key = `ping:v1:acme:e-${n}`;
    const rowAtSend: Array<string | undefined> = [];
    const { tools, intent, calls } = scriptedTool({
      name: 'ping',
      dedupe,
      outcomes: [committed('ref-1')],
      onExecute: async () => {
        rowAtSend.push((await ledger.get(key))?.status);
      },
    });
    const policy: VolatilePolicy = { trustedApprovalKeys: trusted, operators: {} };
    const execute = createExecuteAction({
      tools,
      crash: () => undefined,
      sleep: async () => undefined,
      now: () => NOW,
      ledger: rowStore,
      volatilePolicy: async () => policy,
    });
    const requestHash = tools.hash(intent);
    const holder = `action:run-${n}`;
    const claimedAt = new Date(NOW - 60_000).toISOString();
    const row = { key, tenant: 'acme', requestHash, owner: `run:acme:e-${n}`, claimedAt };
    /** The row as the action workflow claimed it: `planned` at seq 0, held by its run. */
    const claim = async (by = holder) => {
      await ledger.claimRow({ ...row, operation: 'ping', toolVersion: 1, holder: by });
      await ledger.recordStatus({ key, seq: 0, status: 'planned', at: claimedAt, reason: 'claimed', holder: by });
    };
    const record: RecordLedgerInput = {
      ...row,
      holder,
      status: { seq: 1, status: 'dispatching', at: claimedAt, reason: 'dispatch', settled: false },
    };
    const approval: ApprovalToRecheck = {
      publicKeyId: 'k1',
      expiresAt: new Date(NOW + 60_000).toISOString(),
      by: 'alice',
      decisionMode: 'confirm',
    };
    const run = (handed: Pick<ExecuteInput, 'approval' | 'record'>, attempt = 1) =>
      new MockActivityEnvironment({ attempt }).run(execute, {
        key,
        intent,
        requestHash,
        mode: 'first' as const,
        ...handed,
      }) as Promise<ExecuteOutcome>;
    return { key, calls, claim, record, approval, run, rowAtSend, policy, execute, intent, requestHash };
  }

  it('writes the dispatching entry to the row before the provider is called, then sends once', async () => {
    const t = setup();
    await t.claim();
    const outcome = await t.run({ record: t.record, approval: t.approval });
    assert.equal(outcome.status, 'confirmed');
    assert.deepEqual(t.rowAtSend, ['dispatching'], 'the provider was called once, with the row already dispatching');
    assert.equal((await ledger.get(t.key))?.seq, 1);
  });

  it('after an attempt that wrote the entry (and may have sent): no re-check, the entry not written twice, maybe-sent', async () => {
    const t = setup({});
    await t.claim();
    await ledger.recordStatus({ key: t.key, ...t.record.status, holder: t.record.holder });
    // The key is no longer trusted: a re-check would refuse. The earlier attempt passed it, and may have sent.
    const outcome = await t.run({ record: t.record, approval: t.approval }, 2);
    assert.equal(outcome.status, 'confirmed', 'resent under the key, as the table says for a maybe-sent attempt');
    const trail = await ledger.audit(t.key);
    assert.deepEqual(
      trail.map((e) => [e.seq, e.status]),
      [
        [0, 'planned'],
        [1, 'dispatching'],
      ],
    );
  });

  it('after an attempt that died before its entry: the approval is checked again, and the attempt is as good as the first', async () => {
    // A provider without a key: a maybe-sent attempt would end unknown without sending.
    const refused = setup({}, 'none');
    await refused.claim();
    await assert.rejects(
      refused.run({ record: refused.record, approval: refused.approval }, 2),
      (err) => errorDetailsOf(err)?.reason === 'revoked-key',
    );
    assert.equal(refused.calls.execute, 0);

    const t = setup({ k1: 'aa' }, 'none');
    await t.claim();
    const outcome = await t.run({ record: t.record, approval: t.approval }, 3);
    assert.equal(outcome.status, 'confirmed', 'nothing of this dispatch was sent before: it sends');
    assert.equal(t.calls.execute, 1);
    assert.deepEqual(t.rowAtSend, ['dispatching']);
  });

  it('refuses a key no longer trusted: DecisionRejected, nothing sent, the row untouched', async () => {
    const t = setup({ k2: 'bb' });
    await t.claim();
    await assert.rejects(t.run({ record: t.record, approval: t.approval }), (err) => {
      assert.equal(errorCodeOf(err), 'DecisionRejected');
      assert.match((err as Error).message, /approval key k1 is no longer trusted; nothing was sent/);
      assert.equal(errorDetailsOf(err)?.reason, 'revoked-key');
      return true;
    });
    assert.equal(t.calls.execute, 0);
    assert.equal((await ledger.get(t.key))?.status, 'planned');
  });

  it('refuses an approval that expired before the send', async () => {
    const t = setup();
    await t.claim();
    const expired = { ...t.approval, expiresAt: new Date(NOW).toISOString() };
    await assert.rejects(
      t.run({ record: t.record, approval: expired }),
      (err) => errorDetailsOf(err)?.reason === 'expired',
    );
    assert.equal(t.calls.execute, 0);
  });

  it('takes no approval without the ledger row to weigh it against', async () => {
    const t = setup();
    await assert.rejects(t.run({ approval: t.approval }), /checked against its ledger row, and none was handed/);
    assert.equal(t.calls.execute, 0);
  });

  it('heartbeats while it settles, carrying the request log an earlier attempt left', async () => {
    const beats: unknown[] = [];
    let beatsWhenAsked = -1;
    // The row store as the executor sees it: the moment it is first asked is before any request to the provider.
    const watched = Object.create(ledger) as ActionLedger;
    watched.get = (key: string) => {
      beatsWhenAsked = beats.length;
      return ledger.get(key);
    };
    const t = setup({ k1: 'aa' }, 'idempotency-key', watched);
    await t.claim();
    const earlier = {
      requests: [{ kind: 'send', attempt: 1, at: new Date(NOW).toISOString(), answer: 'lost' }],
      sends: 1,
    };
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: earlier });
    env.on('heartbeat', (d: unknown) => beats.push(d));
    await env.run(t.execute, {
      key: t.key,
      intent: t.intent,
      requestHash: t.requestHash,
      mode: 'first' as const,
      record: t.record,
    });
    assert.equal(beatsWhenAsked, 1, 'one heartbeat before the ledger was asked');
    assert.deepEqual(beats[0], earlier, "it carries the earlier attempt's request log, not nothing");
  });

  it('sends nothing when another holder took the row: the write is refused', async () => {
    const t = setup();
    await t.claim('action:another-run');
    await assert.rejects(t.run({ record: t.record }), /no longer holds the row of .*; nothing is sent from here/);
    assert.equal(t.calls.execute, 0);
    assert.equal((await ledger.get(t.key))?.status, 'planned');
  });
});
