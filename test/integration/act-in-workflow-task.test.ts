import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CrashPoint } from '../../activities/crash-points';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { WORKFLOW_TASK_TIMEOUT } from '../../policies/timeouts';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { acmeCharge } from '../support/intents';
import { countForKey, countWhere } from '../support/ledger';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';
import { workflowExists } from '../support/workflow-exists';

/**
 * A run acts on an action's ledger row in its own workflow task: a local activity, no activity task, no action
 * workflow. A local activity is run again with its workflow task when its worker dies, its attempts counting from 1
 * again; the row's holder names the run's history length as the execution's generation, so the execution run again
 * takes the row from the dead one and follows the row (planned: send; dispatching: the key or nothing; settled: the
 * answer). The worker is SIGKILLed inside the local activity at each point, and effects are counted at the provider.
 */
describe("the run's act in its own workflow task, killed inside it", () => {
  let stack: Stack;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-act-in-task-'));
    stack = await startStack({
      providerKinds: ['payments', 'inventory', 'shipping', 'email'],
      ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}`,
    });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Each case brings its own workers; none outlives it. */
  const stopWorkers = () => Promise.all(stack.workers.filter((w) => w.alive()).map((w) => w.stop()));

  const generationOf = (holder: string | undefined) => Number(/#(\d+)\.\d+$/.exec(holder ?? '')?.[1]);

  it('confirms a charge in the run alone: a local activity marker, no activity task, a handful of events', async () => {
    await stack.startWorker({ name: 'steady' });
    try {
      const eventId = uniqueEvent('in-task');
      const runId = runWorkflowId('acme', eventId);
      const key = actionKeyForStep(runId, { operation: 'charge', version: 1 });
      const { operation: _op, ...input } = acmeCharge(eventId, 1_990);
      const result = await stack.client.workflow.execute(retrysafeChargeWorkflow, {
        workflowId: runId,
        taskQueue: stack.taskQueue,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        args: [input],
      });
      assert.equal(result.status, 'confirmed');
      const events = (await stack.client.workflow.getHandle(runId).fetchHistory()).events ?? [];
      assert.equal(events.filter((e) => e.activityTaskScheduledEventAttributes).length, 0, 'no activity task');
      assert.ok(
        events.some((e) => e.markerRecordedEventAttributes),
        'the act is a local activity marker',
      );
      assert.equal(await workflowExists(stack.client, key), false, 'no action workflow');
      assert.match((await stack.ledger!.get(key))?.holder ?? '', new RegExp(`^run:${runId}/[0-9a-f-]+#\\d+\\.1$`));
      assert.equal(countForKey(await stack.providers.payments.ledger(), key).records, 1);
    } finally {
      await stopWorkers();
    }
  });

  const points: Array<[CrashPoint, string]> = [
    [
      'after-row-claimed',
      'nothing was sent, but the keyed claim wrote dispatching: the act run again resends with the key, once',
    ],
    ['before-row-settles', 'the provider committed: the act run again resends with the same key and gets it back'],
    ['after-row-settled', 'the row settled: the act run again answers from it and sends nothing'],
  ];
  for (const [point, what] of points) {
    it(`charges once when the worker dies at ${point}: ${what}`, async () => {
      const doomed = await stack.startWorker({ name: 'doomed', crashAt: `${point}:charge` });
      const eventId = uniqueEvent(point);
      const runId = runWorkflowId('acme', eventId);
      const key = actionKeyForStep(runId, { operation: 'charge', version: 1 });
      const { operation: _op, ...input } = acmeCharge(eventId, 2_490);
      // As RetrysafeClient starts every run: the dead worker's workflow task times out after 3 s, not the server's 10.
      const run = await stack.client.workflow.start(retrysafeChargeWorkflow, {
        workflowId: runId,
        taskQueue: stack.taskQueue,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        args: [input],
      });
      assert.equal((await doomed.exited).signal, 'SIGKILL');
      const killedRow = await stack.ledger!.get(key);
      await stack.startWorker({ name: 'successor' });
      try {
        const result = await run.result();
        assert.equal(result.status, 'confirmed');
        const counts = countForKey(await stack.providers.payments.ledger(), key);
        assert.equal(counts.records, 1, 'exactly one charge at the provider');
        assert.equal(counts.committed, 1);
        const row = await stack.ledger!.get(key);
        assert.equal(row?.status, 'confirmed');
        assert.equal(row?.providerRef, result.chargeId);
        assert.equal(
          await workflowExists(stack.client, key),
          false,
          'recovered in the run: no handover to an action workflow',
        );
        const audit = (await stack.ledger!.audit(key)).map((e) => e.status);
        if (point === 'after-row-settled') {
          assert.equal(killedRow?.status, 'confirmed', 'the dead execution had settled the row');
          assert.equal(row?.holder, killedRow?.holder, 'nothing took the settled row');
          assert.equal(counts.requests, 1, 'the act run again sent nothing');
        } else {
          assert.ok(
            generationOf(row?.holder) > generationOf(killedRow?.holder),
            `the execution run again (${row?.holder}) took the row from the dead one (${killedRow?.holder})`,
          );
        }
        if (point === 'after-row-claimed') {
          // A charge is keyed: its claim wrote `dispatching` with `planned` (one durable write), so the row cannot
          // prove that nothing was sent, and the execution run again resends under the key.
          assert.equal(killedRow?.status, 'dispatching');
          assert.equal(counts.requests, 1, 'nothing was sent before the crash; one send after');
          assert.equal(counts.replayed, 0, 'the provider saw the key once');
          assert.deepEqual(audit, ['planned', 'dispatching', 'dispatching', 'confirmed']);
        }
        if (point === 'before-row-settles') {
          assert.equal(killedRow?.status, 'dispatching');
          assert.equal(counts.replayed, 1, 'the resend carried the key and got the original charge back');
          assert.deepEqual(audit, ['planned', 'dispatching', 'dispatching', 'confirmed']);
          // One send recorded; the dead execution's, whose reply was lost, is counted from the row as possible.
          const shown = await stack.retrysafe.getAction(key);
          assert.deepEqual([shown?.sends, shown?.unrecordedSends], [1, 1], JSON.stringify(shown?.requests));
          assert.equal(counts.requests, 2);
        }
      } finally {
        await stopWorkers();
      }
    });
  }

  it('sends a key-less email once when the worker dies after the claim: the row says planned, so the act sends', async () => {
    const doomed = await stack.startWorker({ name: 'doomed', crashAt: 'after-row-claimed:send-email' });
    const eventId = uniqueEvent('in-task-email-claimed');
    const run = await stack.retrysafe.startRenewal(renewalInput(eventId, { customerEmail: 'kim@example.com' }));
    const receiptKey = actionKeyForStep(run.workflowId, { operation: 'send-email', version: 1, stepId: 'receipt' });
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    const killedRow = await stack.ledger!.get(receiptKey);
    await stack.startWorker({ name: 'successor' });
    try {
      await run.result();
      assert.equal(killedRow?.status, 'planned', 'a key-less claim writes planned alone');
      const row = await stack.ledger!.get(receiptKey);
      assert.equal(row?.status, 'confirmed', 'no review: the row proved that nothing was sent');
      const sent = countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.reference === receiptKey);
      assert.equal(sent, 1);
      const audit = (await stack.ledger!.audit(receiptKey)).map((e) => e.status);
      assert.deepEqual(audit, ['planned', 'dispatching', 'confirmed'], audit.join(' → '));
    } finally {
      await stopWorkers();
    }
  });

  it('brings a webhook that arrives before the handover to the action workflow, as evidence for the person', async () => {
    // The email provider commits, loses its reply and sends message.sent at once: the event reaches the router while
    // the run's act holds the row (dispatching, then unknown) and before the action workflow it hands over to exists.
    const email = stack.providers.email;
    await email.configure({ webhookDelayMs: 0 });
    await email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    await stack.startWorker({ name: 'steady' });
    try {
      const eventId = uniqueEvent('in-task-webhook-gap');
      const run = await stack.retrysafe.startRenewal(renewalInput(eventId, { customerEmail: 'ada@example.com' }));
      const receiptKey = actionKeyForStep(run.workflowId, { operation: 'send-email', version: 1, stepId: 'receipt' });
      const review = await waitForStatus(stack.retrysafe, receiptKey, 'needs_review', { timeoutMs: 60_000 });
      assert.ok(
        review.audit.some((a) => a.to === 'unknown'),
        'the act recorded unknown and handed over',
      );
      await waitUntil(
        'the message.sent event to reach the action workflow',
        async () => Boolean((await stack.retrysafe.getAction(receiptKey))?.events?.length),
        20_000,
      );
      const action = (await stack.retrysafe.getAction(receiptKey))!;
      assert.equal(action.events?.[0].type, 'message.sent');
      const delivered = (await email.ledger()).webhooks.filter((w) => w.type === 'message.sent' && w.delivered);
      assert.ok(delivered.length >= 1, 'the provider had its delivery accepted');
      assert.equal(
        countWhere(await email.ledger(), 'messages', (m) => m.reference === receiptKey),
        1,
        'one email, never resent',
      );
    } finally {
      await email.clearFaults();
      await stopWorkers();
    }
  });

  it('sends a key-less email once when the worker dies before the row has its verdict: unknown, never resent', async () => {
    const doomed = await stack.startWorker({ name: 'doomed', crashAt: 'before-row-settles:send-email' });
    const eventId = uniqueEvent('in-task-email');
    const run = await stack.retrysafe.startRenewal(renewalInput(eventId, { customerEmail: 'sam@example.com' }));
    const receiptKey = actionKeyForStep(run.workflowId, { operation: 'send-email', version: 1, stepId: 'receipt' });
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    await stack.startWorker({ name: 'successor' });
    try {
      const review = await waitForStatus(stack.retrysafe, receiptKey, 'needs_review', { timeoutMs: 90_000 });
      assert.equal(review.status, 'needs_review');
      const sent = countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.reference === receiptKey);
      assert.equal(sent, 1, 'the email the dead execution sent, and no second one');
      const audit = (await stack.ledger!.audit(receiptKey)).map((e) => e.status);
      assert.deepEqual(audit.slice(0, 3), ['planned', 'dispatching', 'unknown'], audit.join(' → '));
    } finally {
      await stopWorkers();
    }
  });
});
