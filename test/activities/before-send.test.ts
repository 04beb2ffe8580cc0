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

  function setup(trusted: Record<string, string> = { k1: 'aa' }) {
    n += 1;
    const key = `ping:v1:acme:e-${n}`;
    const rowAtSend: Array<string | undefined> = [];
    const { tools, intent, calls } = scriptedTool({
      name: 'ping',
      dedupe: 'idempotency-key',
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
      ledger,
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
    return { key, calls, claim, record, approval, run, rowAtSend, policy };
  }

  it('writes the dispatching entry to the row before the provider is called, then sends once', async () => {
    const t = setup();
    await t.claim();
    const outcome = await t.run({ record: t.record, approval: t.approval });
    assert.equal(outcome.status, 'confirmed');
    assert.deepEqual(t.rowAtSend, ['dispatching'], 'the provider was called once, with the row already dispatching');
    assert.equal((await ledger.get(t.key))?.seq, 1);
  });

  it('a retried attempt writes the same entry again as a repeat, not a second one', async () => {
    const t = setup();
    await t.claim();
    await ledger.recordStatus({ key: t.key, ...t.record.status, holder: t.record.holder });
    await t.run({ record: t.record }, 2);
    const trail = await ledger.audit(t.key);
    assert.deepEqual(
      trail.map((e) => [e.seq, e.status]),
      [
        [0, 'planned'],
        [1, 'dispatching'],
      ],
    );
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
    await assert.rejects(t.run({ approval: expired }), (err) => errorDetailsOf(err)?.reason === 'expired');
    assert.equal(t.calls.execute, 0);
  });

  it('does not weigh the approval again on a later attempt: that dispatch may have sent already', async () => {
    const t = setup({});
    await t.claim();
    const outcome = await t.run({ record: t.record, approval: t.approval }, 2);
    assert.equal(outcome.status, 'confirmed');
    assert.equal(t.calls.execute, 1);
  });

  it('sends nothing when another holder took the row: the write is refused', async () => {
    const t = setup();
    await t.claim('action:another-run');
    await assert.rejects(t.run({ record: t.record }), /no longer holds the row of .*; nothing is sent from here/);
    assert.equal(t.calls.execute, 0);
    assert.equal((await ledger.get(t.key))?.status, 'planned');
  });
});
