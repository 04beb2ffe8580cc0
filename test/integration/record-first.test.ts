import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { acmeCharge } from '../support/intents';
import { countForKey, countWhere } from '../support/ledger';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus } from '../support/wait';
import { workflowExists } from '../support/workflow-exists';

/**
 * The ledger's row is the action's record on the happy path: a run's act takes the row, sends with the key and
 * settles the row in one local activity of the run's own workflow task, and no action workflow starts. The action workflow starts only when someone must
 * wait or decide: a second claimant while the run sends (it waits for the row and shares the outcome), or an outcome
 * nobody knows (it takes the row over and reconciles, never resending blindly). Effects are counted at the provider.
 */
describe('the record first: a run acts on the ledger row, an action workflow only when needed', () => {
  let stack: Stack;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-record-first-'));
    stack = await startStack({
      providerKinds: ['payments', 'inventory', 'shipping', 'email'],
      ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}`,
    });
    await stack.startWorker();
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const chargeInput = (eventId: string) => {
    const { operation: _op, ...input } = acmeCharge(eventId, 1_990);
    return input;
  };

  it("charges once in the run's own workflow task: no action workflow, the row settled, found by its key", async () => {
    const eventId = uniqueEvent('record-first');
    const runId = runWorkflowId('acme', eventId);
    const key = actionKeyForStep(runId, { operation: 'charge', version: 1 });
    const result = await stack.client.workflow.execute(retrysafeChargeWorkflow, {
      workflowId: runId,
      taskQueue: stack.taskQueue,
      args: [chargeInput(eventId)],
    });
    assert.equal(result.status, 'confirmed');
    assert.equal(await workflowExists(stack.client, key), false, 'no action workflow started');
    assert.equal(countForKey(await stack.providers.payments.ledger(), key).committed, 1);

    const row = await stack.ledger!.get(key);
    assert.equal(row?.status, 'confirmed');
    assert.equal(row?.providerRef, result.chargeId);
    assert.equal(row?.owner, runId);
    assert.match(row?.holder ?? '', new RegExp(`^run:${runId}/[0-9a-f-]+#\\d+\\.1$`), 'the run act holds the row');
    const audit = await stack.ledger!.audit(key);
    assert.deepEqual(
      audit.map((e) => [e.seq, e.status]),
      [
        [0, 'planned'],
        [1, 'dispatching'],
        [2, 'confirmed'],
      ],
    );

    // Found by its key like any action: the client answers from the ledger.
    const shown = await stack.retrysafe.getAction(key);
    assert.equal(shown?.status, 'confirmed');
    assert.equal(shown?.source, 'ledger');
    assert.equal(shown?.owner, runId);

    // The run's own history: no activity task, the act a local activity in the run's first workflow task; at most 9
    // events (start, one task, the prepare-and-act marker, the key's search attribute, completion) and 1 task.
    const history = await stack.client.workflow.getHandle(runId).fetchHistory();
    const events = history.events ?? [];
    const tasks = events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    assert.equal(events.filter((e) => e.activityTaskScheduledEventAttributes).length, 0);
    assert.equal(events.filter((e) => e.markerRecordedEventAttributes).length, 1, 'prepare and act, one marker');
    assert.ok(events.length <= 9, `the run took ${events.length} events`);
    assert.equal(tasks, 1, `the run took ${tasks} workflow tasks`);
  });

  it('a second claimant while the run sends waits for the row, then shares its outcome', async () => {
    const eventId = uniqueEvent('record-first-contended');
    const runId = runWorkflowId('acme', eventId);
    const key = actionKeyForStep(runId, { operation: 'charge', version: 1 });
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'delay', delayMs: 2_000, times: 1 }]);
    const run = await stack.client.workflow.start(retrysafeChargeWorkflow, {
      workflowId: runId,
      taskQueue: stack.taskQueue,
      args: [chargeInput(eventId)],
    });
    // Claimed by application code while the run's act holds the row and waits for the provider.
    for (let i = 0; (await stack.ledger!.get(key))?.status !== 'dispatching'; i++) {
      assert.ok(i < 200, 'the run never put dispatching on record');
      await sleep(25);
    }
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, acmeCharge(eventId, 1_990), {
      wait: true,
      timeoutMs: 30_000,
    });
    const result = await run.result();
    assert.equal(result.status, 'confirmed');
    assert.equal(claimed.status, 'confirmed', JSON.stringify(claimed.audit));
    assert.equal(claimed.providerRef, result.chargeId);
    assert.equal(claimed.owner, runId, 'the run acted on the row, so it owns the action');
    assert.match(claimed.audit.at(-1)!.reason, /answered from the ledger/);
    assert.equal(countForKey(await stack.providers.payments.ledger(), key).committed, 1);
    assert.equal(countForKey(await stack.providers.payments.ledger(), key).records, 1);
  });

  it('an unknown outcome hands the row to the action workflow, which reconciles and never resends', async () => {
    const eventId = uniqueEvent('record-first-unknown');
    await stack.providers.email.setFaults([
      { op: 'messages.create', kind: 'status-after-commit', status: 502, times: 1 },
    ]);
    const run = await stack.retrysafe.startRenewal(renewalInput(eventId, { customerEmail: 'pat@example.com' }));
    const receiptKey = actionKeyForStep(run.workflowId, { operation: 'send-email', version: 1, stepId: 'receipt' });
    const review = await waitForStatus(stack.retrysafe, receiptKey, 'needs_review', { timeoutMs: 90_000 });
    assert.equal(review.source ?? 'workflow', 'workflow', 'the action workflow holds it now');
    const reasons = review.audit.map((e) => e.reason).join('\n');
    assert.match(reasons, /taken over from the run's act/);
    const row = await stack.ledger!.get(receiptKey);
    assert.equal(row?.status, 'needs_review');
    assert.match(row?.holder ?? '', /^action:/);
    const statuses = (await stack.ledger!.audit(receiptKey)).map((e) => e.status);
    assert.deepEqual(statuses.slice(0, 3), ['planned', 'dispatching', 'unknown'], statuses.join(' → '));
    const emails = countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.reference === receiptKey);
    assert.equal(emails, 1, 'the email was sent once and never again');
    // The charge before it took the short path: no workflow of its own.
    const chargeKey = actionKeyForStep(run.workflowId, { operation: 'charge', version: 1 });
    assert.equal(await workflowExists(stack.client, chargeKey), false);
    assert.equal((await stack.ledger!.get(chargeKey))?.status, 'confirmed');
    await run.terminate('test done');
  });
});
