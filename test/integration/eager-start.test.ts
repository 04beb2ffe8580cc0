import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { RetrysafeClient } from '../../client';
import { exampleRegistry } from '../../examples/tools';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { errorCodeOf } from '../../policies/errors';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../../policies/search-attributes';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { retrysafePlugin } from '../../workers/plugin';
import { acmeCharge } from '../support/intents';
import { countForKey } from '../support/ledger';
import { uniqueEvent } from '../support/renewal-input';

/**
 * An agent service with its own worker: the RetrysafeClient is built on the worker's NativeConnection with
 * `eagerStart`, so the server hands a run's first workflow task to that worker in its answer to the start, and the
 * run's act (a local activity) runs in it. One option on the client, nothing else to arrange. A client on another
 * connection, or without the option, starts runs as before.
 */
describe('eager start of runs on a worker in the same process', () => {
  let stack: Stack;
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `eager-${process.pid}`;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    connection = await NativeConnection.connect({ address: stack.server.address });
    const tools = exampleRegistry({ payments: stack.providers.payments.url });
    worker = await Worker.create({
      connection,
      namespace: stack.server.namespace,
      taskQueue,
      // The stack's bundle of the example workflows (kept between test files): bundling again costs seconds.
      workflowBundle: { codePath: stack.workerEnv.RETRYSAFE_WORKFLOW_BUNDLE },
      plugins: [retrysafePlugin({ tools, ledger: stack.ledger })],
    });
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    await stack?.stop();
  });

  async function chargeRun(eagerStart: boolean) {
    const client = new Client({ connection, namespace: stack.server.namespace });
    const retrysafe = new RetrysafeClient(client, {
      taskQueue,
      tools: exampleRegistry(),
      ledger: stack.ledger,
      eagerStart,
    });
    const eventId = uniqueEvent(eagerStart ? 'eager' : 'polled');
    const { operation: _op, ...input } = acmeCharge(eventId, 990);
    const run = await retrysafe.startRun(retrysafeChargeWorkflow, { tenant: 'acme', eventId, input });
    const result = await run.result();
    const key = actionKeyForStep(runWorkflowId('acme', eventId), { operation: 'charge', version: 1 });
    const events = (await run.fetchHistory()).events ?? [];
    return { run, result, key, events };
  }

  it('starts a run eagerly when asked: its act runs in the first task, one charge, one workflow task', async () => {
    const { run, result, key, events } = await chargeRun(true);
    assert.equal(run.eagerlyStarted, true, 'the server handed the first task to this process');
    assert.equal(result.status, 'confirmed');
    assert.equal(countForKey(await stack.providers.payments.ledger(), key).records, 1);
    assert.equal(events.filter((e) => e.workflowTaskCompletedEventAttributes).length, 1);
  });

  it('starts a new run in one call, and reads back only a run that was there before', async () => {
    // Every describe this client makes, counted by a client interceptor: the input check reads the run back.
    let describes = 0;
    const client = new Client({
      connection,
      namespace: stack.server.namespace,
      interceptors: {
        workflow: [
          {
            describe: (input, next) => {
              describes++;
              return next(input);
            },
          },
        ],
      },
    });
    const retrysafe = new RetrysafeClient(client, { taskQueue, tools: exampleRegistry(), ledger: stack.ledger });
    const eventId = uniqueEvent('one-call');
    const { operation: _op, ...input } = acmeCharge(eventId, 990);
    const run = await retrysafe.startRun(retrysafeChargeWorkflow, { tenant: 'acme', eventId, input });
    assert.equal(describes, 0, 'a start that created the run reads nothing back');
    const again = await retrysafe.startRun(retrysafeChargeWorkflow, { tenant: 'acme', eventId, input });
    assert.equal(describes, 1, 'a start that found the run reads its input back');
    assert.equal((await again.describe()).runId, (await run.describe()).runId);
    await run.result();
    await assert.rejects(
      retrysafe.startRun(retrysafeChargeWorkflow, { tenant: 'acme', eventId, input: { ...input, amountCents: 991 } }),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
    );
  });

  it("upserts only what the start left out: RetrysafeClient's run carries its kind, tenant and status from the start", async () => {
    const upserted = (events: Awaited<ReturnType<typeof chargeRun>>['events']) =>
      events
        .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields)
        .filter((fields) => fields !== undefined && fields !== null)
        .map((fields) => Object.keys(fields).sort());
    const { run, events } = await chargeRun(false);
    assert.deepEqual(upserted(events), [['RetrysafeActionKeys']], 'one upsert: the action key');
    const found = (await run.describe()).typedSearchAttributes;
    assert.deepEqual(
      [found.get(SA_KIND), found.get(SA_TENANT), found.get(SA_STATUS)],
      ['run', 'acme', 'running'],
      'findable as a run of its tenant all the same',
    );
    // Started by a plain client, the run sets them itself, in its first task.
    const eventId = uniqueEvent('plain-start');
    const { operation: _op, ...input } = acmeCharge(eventId, 990);
    const plain = await new Client({ connection, namespace: stack.server.namespace }).workflow.start(
      retrysafeChargeWorkflow,
      { workflowId: runWorkflowId('acme', eventId), taskQueue, args: [input] },
    );
    await plain.result();
    assert.deepEqual(upserted((await plain.fetchHistory()).events ?? []), [
      ['RetrysafeKind', 'RetrysafeStatus', 'RetrysafeTenant'],
      ['RetrysafeActionKeys'],
    ]);
    assert.equal((await plain.describe()).typedSearchAttributes.get(SA_TENANT), 'acme');
  });

  it('starts as before without the option', async () => {
    const { run, result } = await chargeRun(false);
    assert.equal(run.eagerlyStarted, false);
    assert.equal(result.status, 'confirmed');
  });
});
