import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { RetrysafeClient } from '../../client';
import type { Ledger } from '../../examples/sandbox-providers/spawn';
import type { FulfillmentResult } from '../../examples/workflows/fulfillment-agent';
import type { AgentRunStatus, RunStatus } from '../../messages/run';
import { formatActionKey } from '../../policies/action-key';
import { errorCodeOf } from '../../policies/errors';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { decisionKit } from '../support/decisions';
import { agentInput } from '../support/agent-input';
import { start as startFakeModel, type FakeOpenAiServer } from '../support/fake-openai-server';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';

/**
 * Downstream work waits while an upstream action is unresolved, through the whole reconciliation (about 30 s of
 * failed lookups before a person is asked), and goes on only after a person's signed resolution: a re-planned charge
 * of an agent, and another run's announcement. Each waits out that window, so they run in `npm run test:long`.
 */
const kit = decisionKit();
const key = (operation: string, eventId: string) => formatActionKey({ operation, version: 1, tenant: 'acme', eventId });
const countEmails = (ledger: Ledger) => (ledger.records.messages ?? []).length;

describe('downstream steps wait while an upstream action is unresolved, until a person resolves it', () => {
  let stack: Stack;
  let worker: WorkerProcess;
  let model: FakeOpenAiServer;

  before(async () => {
    [stack, model] = await Promise.all([startStack({ workerEnv: kit.workerEnv }), startFakeModel()]);
    worker = await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await stack?.stop();
    await model?.close();
  });
  async function ensureWorker(): Promise<void> {
    if (!worker.alive()) worker = await stack.startWorker({ name: 'steady' });
  }
  async function clearFaults(): Promise<void> {
    await Promise.all(Object.values(stack.providers).map((p) => (typeof p === 'object' ? p.clearFaults() : undefined)));
  }

  it('does not execute a re-planned charge with another amount while the first one is unknown, until an operator resolves it', async () => {
    // A payments endpoint that takes every request and never answers: each send may or may not have
    // committed, and nothing can be looked up. Its own task queue keeps the other tests' worker away.
    const seenKeys: string[] = [];
    const blackHole = http.createServer((req) => {
      if (req.method === 'POST') seenKeys.push(String(req.headers['idempotency-key']));
      req.socket.destroy();
    });
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
    const blackHoleUrl = `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}`;
    const taskQueue = 'replan-guard';
    const rs = new RetrysafeClient(stack.client, { taskQueue });
    const eventId = uniqueEvent('replan');
    const charge = (amountCents: number) => ({
      toolCall: {
        name: 'charge',
        arguments: {
          amountCents,
          currency: 'usd',
          customerId: 'cus_acme',
          paymentMethod: 'pm_7',
          merchantReference: `A-${eventId}`.slice(0, 80),
        },
      },
    });
    model.script([charge(4990), charge(5990)]);
    const replanWorker = await stack.startWorker({
      name: 'replan',
      env: {
        RETRYSAFE_TASK_QUEUE: taskQueue,
        RETRYSAFE_PAYMENTS_URL: blackHoleUrl,
        RETRYSAFE_PLANNER: 'openai',
        RETRYSAFE_PLANNER_URL: model.url,
        RETRYSAFE_PLANNER_MODEL: 'fake-gpt',
      },
    });
    try {
      const run = await rs.startAgentRun(agentInput(eventId));
      const firstKey = key('charge', eventId);
      const replannedKey = `${firstKey}:charge-r2`;
      await waitUntil('the re-planned charge to wait for its predecessor', async () => {
        const status = (await run.query('retrysafe.agentRunStatus')) as AgentRunStatus;
        return status.pendingReplans.includes(replannedKey);
      });
      const status = (await run.query('retrysafe.agentRunStatus')) as AgentRunStatus;
      assert.equal(status.waitingOn, firstKey, 'the run says it waits for the unresolved first charge');
      assert.ok(['unknown', 'needs_review'].includes((await rs.getAction(firstKey))!.status));
      assert.equal(await rs.getAction(replannedKey), undefined, 'the new action was not even claimed');
      assert.ok(!seenKeys.includes(replannedKey), 'and nothing was sent with its key');

      await waitForStatus(rs, firstKey, 'needs_review', { timeoutMs: 90_000 });
      assert.equal(await rs.getAction(replannedKey), undefined, 'still not claimed while the first is in review');
      // Accepting the risk of a second charge takes a signed accept-risk by a resolver, bound to the
      // re-planned request's hash: an unsigned one, one by an approver-only operator, or one for another
      // hash is refused, and the re-planned charge stays unclaimed.
      const acceptRisk = (signed: unknown) => run.executeUpdate('retrysafe.acceptRisk', { args: [signed] });
      const reason = { params: { reason: 'customer asked for the larger plan' } };
      await assert.rejects(acceptRisk({ key: replannedKey, operator: 'alice', reason: 'unsigned' }));
      await assert.rejects(
        acceptRisk(kit.sign('accept-risk', replannedKey, { requestHash: 'a'.repeat(64), ...reason })),
        (err: unknown) => errorCodeOf(err) === 'DecisionRejected',
      );
      const status2 = (await run.query('retrysafe.agentRunStatus')) as AgentRunStatus;
      assert.deepEqual(status2.pendingReplans, [replannedKey], 'the re-planned charge still waits');
      assert.equal(await rs.getAction(replannedKey), undefined, 'and is still not claimed');
      const first = (await rs.getAction(firstKey))!;
      await rs.resolveAction(
        kit.sign('resolve', firstKey, {
          requestHash: first.requestHash,
          params: { outcome: 'failed', reason: 'the processor confirmed the first authorization was never captured' },
        }),
      );
      const replanned = await waitForStatus(
        rs,
        replannedKey,
        ['awaiting_confirmation', 'dispatching', 'unknown', 'needs_review', 'confirmed', 'failed'],
        { timeoutMs: 30_000 },
      );
      // After the resolution the re-planned charge exists under its own key, as a new reviewable action:
      // 5990 cents is above the automatic limit, so it waits for a person's signed approval.
      assert.equal(replanned.status, 'awaiting_confirmation');
      assert.equal(replanned.dryRun?.amountCents, 5990);
      assert.ok(seenKeys.includes(firstKey), 'the first charge was sent');
      assert.deepEqual(
        [...new Set(seenKeys)].filter((k) => k !== firstKey && k !== replannedKey),
        [],
        'no other key was sent',
      );
    } finally {
      await replanWorker.kill();
      await new Promise((r) => blackHole.close(r));
    }
  });

  it('holds the fulfillment announcement while the charge is unknown, and announces once it is confirmed', async () => {
    await ensureWorker();
    await clearFaults();
    const input = renewalInput(uniqueEvent('interlock'));
    const chargeKey = key('charge', input.eventId);
    // The charge commits, then the payments provider dies before answering and before any webhook: the
    // outcome is unknown, and with the provider gone no lookup can settle it.
    await stack.providers.payments.configure({ webhookUrl: null });
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'hold-after-commit', delayMs: 5_000 }]);
    await stack.retrysafe.startRenewal(input);
    const fulfillment = await stack.retrysafe.startFulfillment({
      tenant: 'acme',
      eventId: input.eventId,
      upstreamKey: chargeKey,
      customerEmail: 'buyer@example.com',
      orderId: input.orderId,
    });
    await stack.providers.payments.waitForInflight((s) => s.committedButUnanswered >= 1, 30_000);
    const chargeId = (await stack.providers.payments.ledger()).records.charges?.find(
      (c) => (c as { idempotencyKey?: string }).idempotencyKey === chargeKey,
    )?.id;
    assert.ok(chargeId, 'the provider committed the charge');
    process.kill(stack.providers.payments.pid, 'SIGKILL');

    await waitForStatus(stack.retrysafe, chargeKey, ['unknown', 'needs_review']);
    const waiting = (await fulfillment.query('retrysafe.runStatus')) as RunStatus;
    assert.equal(waiting.waitingOn, chargeKey, 'the fulfillment agent says what it waits for');
    await waitUntil('the waiting run to be listed', async () =>
      (await stack.retrysafe.listWaitingRuns()).some(
        (r) => r.workflowId === fulfillment.workflowId && r.waitingOn === chargeKey,
      ),
    );
    assert.equal(countEmails(await stack.providers.email.ledger()), 0, 'no announcement while the charge is unknown');

    const review = await waitForStatus(stack.retrysafe, chargeKey, ['needs_review'], { timeoutMs: 90_000 });
    assert.ok(
      review.checks.some((c) => !c.trustworthy),
      'failed lookups are recorded as untrustworthy checks',
    );
    assert.equal(countEmails(await stack.providers.email.ledger()), 0, 'still no announcement in needs_review');

    await stack.retrysafe.resolveAction(
      kit.sign('resolve', chargeKey, {
        requestHash: review.requestHash,
        params: { outcome: 'confirmed', reason: 'charge seen in the payments dashboard', providerRef: chargeId! },
      }),
    );
    const announced = (await fulfillment.result()) as FulfillmentResult;
    assert.equal(announced.announced, true);
    assert.equal(announced.upstreamStatus, 'confirmed');
    assert.equal(countEmails(await stack.providers.email.ledger()), 1, 'one announcement after confirmation');
  });
});
