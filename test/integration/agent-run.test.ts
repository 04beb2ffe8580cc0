import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { formatActionKey } from '../../policies/action-key';
import { errorCodeOf } from '../../policies/errors';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import type { AgentRunResult } from '../../workflows/agent-run';
import type { AgentRunStatus } from '../../messages/run';
import { start as startFakeModel, type FakeOpenAiServer } from '../support/fake-openai-server';
import { decisionKit } from '../support/decisions';
import { agentInput } from '../support/agent-input';
import { countForKey } from '../support/ledger';

const kit = decisionKit();
import { uniqueEvent } from '../support/renewal-input';
import { waitUntil } from '../support/wait';

const key = (operation: string, eventId: string) => formatActionKey({ operation, version: 1, tenant: 'acme', eventId });

describe('agent runs: recorded model decisions, several agents, ceilings', () => {
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

  it('gives one reservation, one charge and one shipment when two agents propose the same renewal', async () => {
    await ensureWorker();
    const eventId = uniqueEvent('two-agents');
    const [a, b] = await Promise.all([
      stack.retrysafe.startAgentRun(agentInput(eventId, 'agent-a')),
      stack.retrysafe.startAgentRun(agentInput(eventId, 'agent-b')),
    ]);
    const [ra, rb] = (await Promise.all([a.result(), b.result()])) as AgentRunResult[];
    assert.equal(ra.status, 'done');
    assert.equal(rb.status, 'done');
    assert.deepEqual(
      ra.actions.map((x) => x.key),
      rb.actions.map((x) => x.key),
      'both agents derived the same keys',
    );
    // One owner: the agent whose act took the charge's row; the other was answered with its outcome.
    const charge = await stack.retrysafe.getAction(key('charge', eventId));
    assert.ok([a.workflowId, b.workflowId].includes(charge?.owner ?? ''), `one owner: ${charge?.owner}`);
    assert.equal((await stack.ledger!.get(key('charge', eventId)))?.owner, charge?.owner);
    const refs = [ra, rb].map((r) => r.actions.find((x) => x.key === key('charge', eventId))?.providerRef);
    assert.equal(refs[0], charge?.providerRef, 'both agents report the one charge');
    assert.equal(refs[1], charge?.providerRef, 'both agents report the one charge');
    assert.equal(countForKey(await stack.providers.payments.ledger(), key('charge', eventId)).records, 1);
    assert.equal(
      countForKey(await stack.providers.inventory.ledger(), key('reserve', eventId), 'reservations').records,
      1,
    );
    const shipments = (await stack.providers.shipping.ledger()).records.shipments ?? [];
    assert.equal(
      shipments.filter((s) => (s as { orderId?: string }).orderId === `A-${eventId}`.slice(0, 80)).length,
      1,
    );
  });

  it('refuses an agent that proposes the same action key with a different amount', async () => {
    await ensureWorker();
    const eventId = uniqueEvent('conflicting-agents');
    const first = (await (
      await stack.retrysafe.startAgentRun(agentInput(eventId, 'agent-a'))
    ).result()) as AgentRunResult;
    assert.equal(first.status, 'done');
    const rogue = await stack.retrysafe.startAgentRun(agentInput(eventId, 'agent-c', {}, 49900));
    await assert.rejects(
      rogue.result(),
      (err: unknown) => err instanceof WorkflowFailedError && errorCodeOf(err) === 'IntentMismatch',
    );
    assert.equal(
      countForKey(await stack.providers.payments.ledger(), key('charge', eventId)).records,
      1,
      'no second charge',
    );
  });

  for (const planner of ['openai', 'ai-sdk'] as const) {
    it(`asks the model once per decision even when the worker dies between plan and act (${planner} planner)`, async () => {
      if (worker.alive()) await worker.stop();
      const eventId = uniqueEvent(`model-once-${planner}`);
      const facts = agentInput(eventId).facts as { order: { id: string; address: unknown } };
      const order = facts.order;
      const before = model.calls();
      model.script([
        { toolCall: { name: 'reserve', arguments: { sku: 'plan-annual', quantity: 1, orderId: order.id } } },
        {
          toolCall: {
            name: 'charge',
            arguments: {
              amountCents: 4990,
              currency: 'usd',
              customerId: 'cus_acme',
              paymentMethod: 'pm_7',
              merchantReference: order.id,
            },
          },
        },
        {
          toolCall: {
            name: 'create-shipment',
            arguments: { shipmentRef: `${order.id}-ship`, orderId: order.id, address: order.address },
          },
        },
        { toolCall: { name: 'stop', arguments: { reason: 'renewed' } } },
      ]);
      const modelEnv = {
        RETRYSAFE_PLANNER: planner,
        RETRYSAFE_PLANNER_URL: model.url,
        RETRYSAFE_PLANNER_MODEL: 'fake-gpt',
      };
      const doomed = await stack.startWorker({
        name: `doomed-${planner}`,
        crashAt: 'before-send:charge',
        env: modelEnv,
      });
      const run = await stack.retrysafe.startAgentRun(agentInput(eventId));
      assert.equal((await doomed.exited).signal, 'SIGKILL');
      const callsAtCrash = model.calls() - before;
      assert.equal(callsAtCrash, 2, 'reserve and charge were planned before the crash');
      worker = await stack.startWorker({ name: `successor-${planner}`, env: modelEnv });
      const result = (await run.result()) as AgentRunResult;
      assert.equal(result.status, 'done');
      assert.equal(model.calls() - before, 4, 'four decisions, four model calls: none repeated after the restart');
      assert.ok(result.decisions.every((d) => d.modelId === 'fake-gpt'));
      assert.equal(countForKey(await stack.providers.payments.ledger(), key('charge', eventId)).records, 1);
      await worker.stop();
    });
  }

  it('keeps its recorded decisions when it resumes on a planner that now answers differently', async () => {
    if (worker.alive()) await worker.stop();
    const eventId = uniqueEvent('new-model');
    const doomed = await stack.startWorker({ name: 'doomed', crashAt: 'after-commit:charge' });
    const run = await stack.retrysafe.startAgentRun(agentInput(eventId));
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    worker = await stack.startWorker({ name: 'upsell', env: { RETRYSAFE_PLANNER: 'scripted-upsell' } });
    const result = (await run.result()) as AgentRunResult;
    assert.equal(result.status, 'done');
    const charges = ((await stack.providers.payments.ledger()).records.charges ?? []).filter(
      (c) => (c as { idempotencyKey?: string }).idempotencyKey === key('charge', eventId),
    ) as unknown as Array<{ amountCents: number }>;
    assert.deepEqual(
      charges.map((c) => c.amountCents),
      [4990],
      "one charge, with the recorded amount, not the new planner's",
    );
    const models = result.decisions.map((d) => `${d.kind}:${d.operation ?? ''}:${d.modelId}`);
    assert.deepEqual(models.slice(0, 2), ['act:reserve:scripted:renewal-v1', 'act:charge:scripted:renewal-v1']);
    assert.ok(
      models.slice(2).every((m) => m.endsWith('scripted:renewal-v2-upsell')),
      'later decisions come from the new planner',
    );
    await worker.stop();
    worker = await stack.startWorker({ name: 'steady' });
  });

  it('pauses in needs_review at the spend ceiling and continues the same step after an operator raises it', async () => {
    await ensureWorker();
    const eventId = uniqueEvent('spend-ceiling');
    const run = await stack.retrysafe.startAgentRun(
      agentInput(eventId, undefined, { ceilings: { maxSpendCents: 3000 } }),
    );
    let status: AgentRunStatus | undefined;
    await waitUntil('the run to pause at the spend ceiling', async () => {
      status = (await run.query('retrysafe.agentRunStatus')) as AgentRunStatus;
      return status.pausedFor !== undefined;
    });
    assert.match(status!.pausedFor!, /spend/);
    assert.equal(
      countForKey(await stack.providers.payments.ledger(), key('charge', eventId)).requests,
      0,
      'nothing charged',
    );
    const plannedBefore = status!.decisions.length;
    const raise = { ceiling: 'spend', newLimit: 10_000, reason: 'annual plan approved by finance' };
    // Unsigned, or signed by an operator without the admin role: refused, and the run stays paused.
    await assert.rejects(run.executeUpdate('retrysafe.raiseCeiling', { args: [{ ...raise, operator: 'alice' }] }));
    await assert.rejects(
      run.executeUpdate('retrysafe.raiseCeiling', {
        args: [kit.sign('raise-ceiling', run.workflowId, { params: raise }, { operator: 'ava' })],
      }),
      (err: unknown) => errorCodeOf(err) === 'DecisionRejected',
    );
    assert.ok(((await run.query('retrysafe.agentRunStatus')) as AgentRunStatus).pausedFor, 'still paused');
    await run.executeUpdate('retrysafe.raiseCeiling', {
      args: [kit.sign('raise-ceiling', run.workflowId, { params: raise })],
    });
    const result = (await run.result()) as AgentRunResult;
    assert.equal(result.status, 'done');
    assert.equal(countForKey(await stack.providers.payments.ledger(), key('charge', eventId)).records, 1);
    const chargeDecisions = result.decisions.filter((d) => d.operation === 'charge');
    assert.equal(chargeDecisions.length, 1, 'the paused charge was acted on as planned, not re-planned');
    assert.ok(result.decisions.length >= plannedBefore);
  });
});
