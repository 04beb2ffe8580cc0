import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES } from '../../policies/search-attributes';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { manyActionsWorkflow } from '../../examples/workflows/scale';
import { runActionKeys } from '../../scripts/chaos/observe';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { countForKey } from '../support/ledger';
import { uniqueEvent } from '../support/renewal-input';

/** More runs claiming at once than the worker has workflow task slots (the SDK's default is 40; 60 did not always show it). */
const AT_ONCE = 100;
/** More keys than fit in the run's RetrysafeActionKeys: a run of this length failed at its 48th claim before. */
const ACTIONS = 60;

describe('runs at scale on a real Temporal server with one worker', () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack();
    await stack.startWorker({ name: 'long-run' });
  });
  after(async () => {
    await stack?.stop();
  });

  it(`takes ${ACTIONS} actions in turn, each charged once, and lists the newest keys within the value limit`, async () => {
    const eventId = uniqueEvent('long-run');
    const workflowId = runWorkflowId('acme', eventId);
    const result = await stack.client.workflow.execute(manyActionsWorkflow, {
      workflowId,
      taskQueue: stack.taskQueue,
      workflowExecutionTimeout: '3 minutes',
      args: [
        {
          count: ACTIONS,
          charge: {
            amountCents: 500,
            currency: 'usd',
            customerId: 'cus_long',
            paymentMethod: 'pm_long',
            merchantReference: `L-${eventId}`,
          },
        },
      ],
    });
    assert.equal(result.confirmed, ACTIONS);
    assert.equal(result.msPerAction.length, ACTIONS);

    const keys = Array.from({ length: ACTIONS }, (_, i) =>
      actionKeyForStep(workflowId, { operation: 'charge', version: 1, stepId: `charge-${i + 1}` }),
    );
    const ledger = await stack.providers.payments.ledger();
    for (const key of keys) assert.equal(countForKey(ledger, key).records, 1, `one charge for ${key}`);

    const listed = await runActionKeys(stack.client, workflowId);
    assert.ok(listed.length < ACTIONS, `${listed.length} listed: the test must overflow the limit`);
    assert.ok(Buffer.byteLength(JSON.stringify(listed)) <= SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES);
    assert.deepEqual(listed, keys.slice(ACTIONS - listed.length), 'the newest keys, in claim order');
    // The oldest key is not listed by the run, and its action still names the run that owns it.
    const first = await stack.retrysafe.getAction(keys[0]);
    assert.equal(first?.status, 'confirmed');
    assert.equal(first?.owner, workflowId);
  });

  it(`finishes ${AT_ONCE} runs started at once, each claiming an action, on one worker`, async () => {
    // A claim waits for its action's first workflow task. Held in the run's own workflow task (a local activity),
    // the runs took every slot and no action ever got one: none of these finished.
    const eventIds = Array.from({ length: AT_ONCE }, (_, i) => uniqueEvent(`at-once-${i}`));
    const results = await Promise.all(
      eventIds.map((eventId) =>
        stack.client.workflow.execute(retrysafeChargeWorkflow, {
          workflowId: runWorkflowId('acme', eventId),
          taskQueue: stack.taskQueue,
          workflowExecutionTimeout: '2 minutes',
          args: [
            {
              amountCents: 500,
              currency: 'usd',
              customerId: 'cus_many',
              paymentMethod: 'pm_many',
              merchantReference: `M-${eventId}`,
            },
          ],
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      eventIds.map(() => 'confirmed'),
    );
    const ledger = await stack.providers.payments.ledger();
    for (const eventId of eventIds) {
      const key = actionKeyForStep(runWorkflowId('acme', eventId), { operation: 'charge', version: 1 });
      assert.equal(countForKey(ledger, key).records, 1, `one charge for ${key}`);
    }
  });
});
