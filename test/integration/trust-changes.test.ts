import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { errorCodeOf, errorDetailsOf } from '../../policies/errors';
import { approveUpdate, refreshTrustUpdate } from '../../messages/approval';
import { resolveUpdate } from '../../messages/action';
import { submitApproval } from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { decisionKit } from '../support/decisions';
import { acmeCharge } from '../support/intents';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus } from '../support/wait';
import { temporal } from '@temporalio/proto';

/**
 * An action loads what its worker trusts when it starts to wait for a person. Keys and operators added
 * while it waits must count without waiting out the confirmation window: a refused decision makes the
 * action re-read its trust (client/index.ts submitDecision), then the decision is delivered once more.
 * Charges are counted at the payments provider.
 */
const kit = decisionKit();
const DIGEST = (c: string) => c.repeat(64);

const charge = acmeCharge;

function refusalReason(err: unknown): unknown {
  assert.equal(errorCodeOf(err), 'DecisionRejected', String(err));
  return errorDetailsOf(err)?.reason;
}

describe('trust that changes while an action waits for a person', () => {
  let stack: Stack;
  let dir: string;
  let operatorsFile: string;
  let worker: WorkerProcess;

  const writeOperators = (entries: Array<{ name: string; digest: string; roles: string[] }>) =>
    writeFile(
      operatorsFile,
      JSON.stringify({
        operators: entries.map((e) => ({
          name: e.name,
          tokenSha256: DIGEST(e.digest),
          tenants: ['acme'],
          roles: e.roles,
        })),
      }),
    );
  const workerEnv = (keys: Record<string, string>) => ({
    RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify(keys),
    RETRYSAFE_OPERATORS_FILE: operatorsFile,
  });
  const requestsFor = async (key: string) =>
    (await stack.providers.payments.ledger()).requests.filter((r) => r.idempotencyKey === key).length;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-trust-'));
    operatorsFile = path.join(dir, 'operators.json');
    await writeOperators([{ name: 'alice', digest: 'a', roles: ['approver', 'resolver'] }]);
    stack = await startStack({ providerKinds: ['payments'] });
    // The first worker trusts only the current key.
    worker = await stack.startWorker({ env: workerEnv({ [kit.current.keyId]: kit.current.publicKeyHex }) });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a key trusted after the action began to wait counts once the action re-reads its trust', async () => {
    const name = uniqueEvent('key-added');
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 7_500));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });

    // The next key is rolled out: a new worker that trusts it replaces the old one.
    await worker.kill('SIGKILL');
    worker = await stack.startWorker({ env: workerEnv(kit.trustedKeys) });
    const approval = kit.sign('approve', waiting.key, { requestHash: waiting.requestHash }, { with: 'next' });

    // Delivered bare, it meets the trust the action loaded when it began to wait: refused, nothing sent.
    await assert.rejects(
      stack.client.workflow.getHandle(waiting.key).executeUpdate(approveUpdate, { args: [approval] }),
      (err) => refusalReason(err) === 'unknown-key',
    );
    assert.equal(await requestsFor(waiting.key), 0);

    // Through the client: refused, re-read, delivered again, and taken.
    const outcome = await submitApproval(stack.client, approval);
    assert.equal(outcome.decision, 'approve');
    const done = await waitForStatus(stack.retrysafe, waiting.key, 'confirmed', { timeoutMs: 30_000 });
    assert.equal(done.approvedBy, 'alice');
    assert.equal(await requestsFor(waiting.key), 1, 'one charge at the provider');
  });

  it('a key no worker trusts is still refused after the re-read, and the action keeps waiting', async () => {
    const name = uniqueEvent('key-retired');
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 7_500));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    const forged = kit.sign('approve', waiting.key, { requestHash: waiting.requestHash }, { with: 'retired' });
    await assert.rejects(submitApproval(stack.client, forged), (err) => refusalReason(err) === 'unknown-key');
    assert.equal((await stack.retrysafe.getAction(waiting.key))?.status, 'awaiting_confirmation');
    assert.equal(await requestsFor(waiting.key), 0);
  });

  it('an operator added to the operators file may resolve an action that was already waiting', async () => {
    const name = uniqueEvent('operator-added');
    // Above the human-only limit: it waits in needs_review with nothing sent.
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 150_000));
    const review = await waitForStatus(stack.retrysafe, claimed.key, 'needs_review', { timeoutMs: 30_000 });
    const resolution = kit.sign(
      'resolve',
      review.key,
      { requestHash: review.requestHash, params: { outcome: 'failed', reason: 'customer withdrew the order' } },
      { operator: 'olga' },
    );
    await assert.rejects(
      stack.client.workflow.getHandle(review.key).executeUpdate(resolveUpdate, { args: [resolution] }),
      (err) => refusalReason(err) === 'unknown-operator',
    );

    // Added while the action waits; the worker reads the file again without a restart.
    await writeOperators([
      { name: 'alice', digest: 'a', roles: ['approver', 'resolver'] },
      { name: 'olga', digest: 'b', roles: ['resolver'] },
    ]);
    const after = await stack.retrysafe.resolveAction(resolution);
    assert.equal(after.status, 'failed');
    assert.ok(
      after.audit.some((e) => e.by === 'olga'),
      'the audit trail names olga',
    );
    assert.equal(await requestsFor(review.key), 0, 'nothing was sent');
  });

  it('re-reads at most once per interval, and only while the action waits for a decision', async () => {
    const name = uniqueEvent('refresh-rate');
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 7_500));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    const handle = stack.client.workflow.getHandle(waiting.key);
    const summary = await handle.executeUpdate(refreshTrustUpdate, { args: [] });
    assert.deepEqual(summary.keyIds, Object.keys(kit.trustedKeys).sort(), 'key IDs, never the keys');
    assert.deepEqual(summary.operators, ['alice', 'olga']);
    await assert.rejects(handle.executeUpdate(refreshTrustUpdate, { args: [] }), (err) => {
      return refusalReason(err) === 'refreshed-recently';
    });

    // An action that waits for no person (an automatic charge, confirmed and open for its settlement) takes none.
    const quiet = uniqueEvent('refresh-not-waiting');
    const done = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: quiet }, charge(quiet, 1_990), {
      wait: true,
      timeoutMs: 30_000,
    });
    assert.equal(done.status, 'confirmed');
    const open = stack.client.workflow.getHandle(done.key);
    assert.equal((await open.describe()).status.name, 'RUNNING', 'still open, waiting for its settlement');
    // Counted as update events: the open action's history may still grow meanwhile for other reasons (the workflow
    // task of the claim completing, its settlement arriving), which once made a count of all events flaky.
    const { EventType } = temporal.api.enums.v1;
    const updateTypes = new Set<number>([
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED,
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED,
      EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    ]);
    const updateEvents = async () =>
      ((await open.fetchHistory()).events ?? []).filter((e) => updateTypes.has(Number(e.eventType))).length;
    const before = await updateEvents();
    assert.ok(before >= 1, 'the count sees update events: the claim itself was one');
    await assert.rejects(open.executeUpdate(refreshTrustUpdate, { args: [] }), (err) => {
      return refusalReason(err) === 'not-waiting';
    });
    assert.equal(await updateEvents(), before, 'a refused refresh adds nothing to history');
  });

  /** The worker is replaced by one started with other settings (keys retired, a stricter policy file). */
  const replaceWorker = async (env: Record<string, string>) => {
    await worker.kill('SIGKILL');
    worker = await stack.startWorker({ env });
  };
  const approveBare = (key: string, requestHash: string) =>
    stack.client.workflow
      .getHandle(key)
      .executeUpdate(approveUpdate, { args: [kit.sign('approve', key, { requestHash })] });

  /** The statuses the worker's ledger recorded for a key, in order. */
  const ledgerTrail = async (key: string) => (await stack.ledger!.audit(key)).map((e) => e.status);

  it('a key retired while the action waited: the approval is taken, and the executor sends nothing with it', async () => {
    const name = uniqueEvent('key-revoked');
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 7_500));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    // The current key is retired: its replacement trusts only the next one. The waiting action still holds the trust
    // it loaded, so the approval signed with the current key passes its check on arrival.
    await replaceWorker(workerEnv({ [kit.next.keyId]: kit.next.publicKeyHex }));
    try {
      const answer = await approveBare(waiting.key, waiting.requestHash);
      assert.equal(answer.status, 'dispatching', 'answered once the action took the approval and handed it over');

      const done = await waitForStatus(stack.retrysafe, waiting.key, 'failed', { timeoutMs: 30_000 });
      assert.equal(done.error?.code, 'DecisionRejected');
      assert.match(done.error?.message ?? '', new RegExp(`approval key ${kit.current.keyId} is no longer trusted`));
      assert.equal(
        await requestsFor(waiting.key),
        0,
        'the executor re-read the trust before it sent: nothing was sent',
      );
      assert.deepEqual(
        await ledgerTrail(waiting.key),
        ['planned', 'awaiting_confirmation', 'failed'],
        'never dispatching',
      );
    } finally {
      await replaceWorker(workerEnv(kit.trustedKeys));
    }
  });

  it('a policy that turned the action human-only while it waited: the approval sends nothing, a person reviews it', async () => {
    const name = uniqueEvent('policy-tightened');
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: name }, charge(name, 7_500));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    // The tenant's limits tighten: above 5 000 cents a person acts, so one approval click is no longer enough.
    const policyFile = path.join(dir, 'tighter-policies.json');
    await writeFile(policyFile, JSON.stringify({ tenants: { acme: { humanOnlyAboveCents: 5_000 } } }));
    await replaceWorker({ ...workerEnv(kit.trustedKeys), RETRYSAFE_POLICY_FILE: policyFile });
    try {
      const answer = await approveBare(waiting.key, waiting.requestHash);
      assert.deepEqual(
        [answer.decision, answer.status],
        ['approve', 'dispatching'],
        'the check comes after the answer',
      );

      const review = await waitForStatus(stack.retrysafe, waiting.key, 'needs_review', { timeoutMs: 30_000 });
      const why = review.audit.at(-1);
      assert.match(why?.reason ?? '', /policy changed since the approval: now human-only/);
      assert.equal(why?.by, 'alice', 'the review names who approved');
      assert.equal(await requestsFor(waiting.key), 0, 'nothing was sent on the approval');
      assert.deepEqual(await ledgerTrail(waiting.key), ['planned', 'awaiting_confirmation', 'needs_review']);
    } finally {
      await replaceWorker(workerEnv(kit.trustedKeys));
    }
  });
});
