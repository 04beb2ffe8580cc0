import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { errorCodeOf, errorDetailsOf, RetrysafeError } from '../../policies/errors';
import type { SignedDecision } from '../../policies/signed-decision';
import { submitApproval } from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolveUpdate, type ActionSnapshot } from '../../messages/action';
import { approveUpdate } from '../../messages/approval';
import { decisionKit } from '../support/decisions';
import { acmeCharge } from '../support/intents';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus } from '../support/wait';

/**
 * Every human command is a signed envelope that the workflow itself verifies. Each attack below is sent
 * straight to the action's workflow through the client (as any process that reaches the frontend
 * could), and must leave the action where it was with nothing sent to the provider.
 */
const kit = decisionKit();

const charge = acmeCharge;

describe('signed decisions, verified inside the workflow', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    await stack.startWorker({ env: kit.workerEnv });
  });
  after(async () => {
    await stack?.stop();
  });

  const requestsFor = async (key: string) =>
    (await stack.providers.payments.ledger()).requests.filter((r) => r.idempotencyKey === key).length;

  /** A charge above the human-only limit: it waits in needs_review for a person, with nothing sent. */
  async function humanOnlyCharge(name: string): Promise<ActionSnapshot> {
    const claimed = await stack.retrysafe.claimAction(
      { tenant: 'acme', eventId: uniqueEvent(name) },
      charge(name, 150_000),
    );
    return waitForStatus(stack.retrysafe, claimed.key, 'needs_review', { timeoutMs: 30_000 });
  }

  async function refused(t: TestContext, action: ActionSnapshot, signed: SignedDecision, reason: string) {
    // Delivered to this action's workflow whatever the envelope names, as an attacker would.
    const sent = stack.client.workflow.getHandle(action.key).executeUpdate(resolveUpdate, { args: [signed] });
    await assert.rejects(sent, (err: unknown) => {
      assert.equal(errorCodeOf(err), 'DecisionRejected', String(err));
      const details = (err as { cause?: { details?: Array<{ reason?: string }> } }).cause?.details?.[0];
      assert.equal(details?.reason, reason, JSON.stringify(details));
      t.diagnostic(`${reason}: ${(err as { cause?: Error }).cause?.message}`);
      return true;
    });
    const now = await stack.retrysafe.getAction(action.key);
    assert.equal(now?.status, 'needs_review', 'the action did not move');
    assert.equal(now?.audit.length, action.audit.length, 'nothing was recorded');
    assert.equal(await requestsFor(action.key), 0, 'nothing reached the provider');
  }

  it('refuses every forged, stale, replayed or out-of-scope resolution, then takes a genuine one once', async (t) => {
    const action = await humanOnlyCharge('resolve-attacks');
    assert.equal(await requestsFor(action.key), 0);
    const fields = {
      requestHash: action.requestHash,
      params: { outcome: 'confirmed', providerRef: 'wire-1', reason: 'wired by treasury' },
    };
    const genuine = () => kit.sign('resolve', action.key, fields);

    const unsigned = { ...genuine(), signature: '' };
    await refused(t, action, unsigned, 'unsigned');
    const tampered = genuine();
    await refused(
      t,
      action,
      { ...tampered, claims: { ...tampered.claims, params: { ...fields.params, providerRef: 'wire-666' } } },
      'bad-signature',
    );
    await refused(t, action, kit.sign('resolve', action.key, fields, { with: 'retired' }), 'unknown-key');
    const past = Date.now() - 2 * 60 * 60 * 1000;
    await refused(
      t,
      action,
      kit.sign('resolve', action.key, fields, {
        issuedAt: new Date(past).toISOString(),
        expiresAt: new Date(past + 60_000).toISOString(),
      }),
      'expired',
    );
    const future = Date.now() + 20 * 60 * 1000;
    await refused(
      t,
      action,
      kit.sign('resolve', action.key, fields, {
        issuedAt: new Date(future).toISOString(),
        expiresAt: new Date(future + 60_000).toISOString(),
      }),
      'not-yet-valid',
    );
    await refused(t, action, kit.sign('resolve', action.key, fields, { tenant: 'globex' }), 'wrong-tenant');
    await refused(t, action, kit.sign('resolve', action.key, fields, { operator: 'gabe' }), 'missing-tenant');
    await refused(t, action, kit.sign('resolve', action.key, fields, { operator: 'ava' }), 'missing-role');
    await refused(t, action, kit.sign('resolve', action.key, fields, { operator: 'mallory' }), 'unknown-operator');
    await refused(
      t,
      action,
      kit.sign('resolve', action.key, { ...fields, requestHash: 'f'.repeat(64) }),
      'hash-mismatch',
    );
    await refused(
      t,
      action,
      kit.sign('resolve', action.key.replace('resolve-attacks', 'someone-else'), fields),
      'wrong-action',
    );
    await refused(t, action, kit.sign('approve', action.key, { requestHash: action.requestHash }), 'wrong-decision');

    // Through the application's client, a refusal is the validator's typed error: its reason and its own words.
    for (const [signed, reason, words] of [
      [kit.sign('resolve', action.key, fields, { operator: 'ava' }), 'missing-role', /ava .*resolver/],
      [{ ...genuine(), signature: '' }, 'unsigned', /signature/],
    ] as const) {
      await assert.rejects(stack.retrysafe.resolveAction(signed), (err: unknown) => {
        assert.ok(err instanceof RetrysafeError, String(err));
        assert.equal(err.code, 'DecisionRejected');
        assert.equal(err.reason, reason);
        assert.doesNotMatch(err.message, /Workflow Update failed/);
        assert.match(err.message, words);
        return true;
      });
    }

    // A genuine decision, signed with the key being rotated in, takes effect once; the same envelope again is a replay.
    const decision = kit.sign('resolve', action.key, fields, { with: 'next' });
    const done = await stack.retrysafe.resolveAction(decision);
    assert.equal(done.status, 'confirmed');
    assert.equal(done.providerRef, 'wire-1');
    const changes = done.audit.filter((a) => a.from !== a.to);
    assert.deepEqual(
      changes.slice(-1).map((a) => [a.from, a.to, a.by]),
      [['needs_review', 'confirmed', 'alice']],
    );
    // A human-only action closes once a person recorded the outcome: the replay finds nothing to change.
    await assert.rejects(stack.retrysafe.resolveAction(decision));
    assert.equal(
      (await stack.retrysafe.getAction(action.key))?.audit.length,
      done.audit.length,
      'the replay changed nothing',
    );
    assert.equal(await requestsFor(action.key), 0, 'a human-only action is never sent by the agent');
  });

  it('refuses an approval by an operator of another tenant or without the approver role, and a replayed one', async () => {
    const claimed = await stack.retrysafe.claimAction(
      { tenant: 'acme', eventId: uniqueEvent('approve-scope') },
      charge('approve-scope', 7_500),
    );
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    const approve = (forge = {}) => kit.sign('approve', waiting.key, { requestHash: waiting.requestHash }, forge);
    for (const [forge, reason] of [
      [{ operator: 'gabe' }, 'missing-tenant'],
      [{ tenant: 'globex' }, 'wrong-tenant'],
      [{ decision: 'resolve' }, 'wrong-decision'],
    ] as const) {
      await assert.rejects(submitApproval(stack.client, approve(forge)), (err: unknown) => {
        // The validator's own code, reason and words, not the SDK's "Workflow Update failed".
        assert.doesNotMatch((err as Error).message, /Workflow Update failed/);
        return errorCodeOf(err) === 'DecisionRejected' && errorDetailsOf(err)?.reason === reason;
      });
    }
    assert.equal((await stack.retrysafe.getAction(waiting.key))?.status, 'awaiting_confirmation');
    assert.equal(await requestsFor(waiting.key), 0);

    const genuine = approve({ operator: 'ava' });
    const outcome = await submitApproval(stack.client, genuine);
    assert.equal(outcome.approver, 'ava');
    const done = await waitForStatus(stack.retrysafe, waiting.key, 'confirmed', { timeoutMs: 30_000 });
    assert.equal(done.approvedBy, 'ava');
    await assert.rejects(submitApproval(stack.client, genuine), (err: unknown) => {
      // The charge stays open for its compensation, so the workflow itself sees the spent nonce.
      return errorCodeOf(err) === 'DecisionRejected' && errorDetailsOf(err)?.reason === 'replayed';
    });
    const ledger = await stack.providers.payments.ledger();
    assert.equal(
      ledger.records.charges?.filter((c) => (c as { idempotencyKey?: string }).idempotencyKey === waiting.key).length,
      1,
    );
  });

  it('answers the approver from a task that only ends the wait, publishes the status and schedules the executor', async () => {
    const name = 'approval-task';
    const claimed = await stack.retrysafe.claimAction(
      { tenant: 'acme', eventId: uniqueEvent(name) },
      charge(name, 7_500),
    );
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    await submitApproval(stack.client, kit.sign('approve', waiting.key, { requestHash: waiting.requestHash }));
    const events = (await stack.client.workflow.getHandle(waiting.key).fetchHistory()).events ?? [];
    const accepted = events.findIndex(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === approveUpdate.name,
    );
    const completed = events.findIndex((e, i) => i > accepted && e.workflowExecutionUpdateCompletedEventAttributes);
    assert.ok(accepted > 0 && completed > accepted, 'the approval was accepted and answered');
    // What the approver waits for, event by event: the patch's marker and its TemporalChangeVersion upsert were
    // recorded before the wait, the trust re-read and the ledger's entry are the executor's (activities/before-send.ts).
    const task = events.slice(accepted, completed + 1).map((e) => {
      const kind = Object.keys(e)
        .find((k) => k.endsWith('EventAttributes'))!
        .replace('EventAttributes', '');
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
      return fields ? `${kind} ${Object.keys(fields).sort().join(',')}` : activity ? `${kind} ${activity}` : kind;
    });
    assert.deepEqual(task, [
      'workflowExecutionUpdateAccepted',
      'timerCanceled',
      'upsertWorkflowSearchAttributes RetrysafeKind,RetrysafeOperation,RetrysafeStatus,RetrysafeTenant',
      'activityTaskScheduled executeAction',
      'workflowExecutionUpdateCompleted',
    ]);
    await waitForStatus(stack.retrysafe, waiting.key, 'confirmed', { timeoutMs: 30_000 });
  });
});
