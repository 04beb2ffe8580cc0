import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { RetrysafeClient } from '../../client';
import { exampleTools } from '../../examples/tools';
import { sandboxUrlsFromEnv } from '../../examples/sandbox-env';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { createToolRegistry } from '../../policies/tool-registry';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { retrysafePlugin } from '../../workers/plugin';
import { acmeCharge } from '../support/intents';
import { uniqueEvent } from '../support/renewal-input';

/**
 * A tool that declares `longCalls` is acted on in an activity with heartbeats, not in the run's workflow task: the
 * same run, the same charge, on a worker whose charge tool says its calls run long. Its act is an activity task in
 * the run's history (with the action's input), where the default is a local activity marker.
 */
describe('long calls stay activities', () => {
  let stack: Stack;
  let connection: NativeConnection;
  const running: Array<{ worker: Worker; done: Promise<void> }> = [];

  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    connection = await NativeConnection.connect({ address: stack.server.address });
  });
  after(async () => {
    for (const r of running) r.worker.shutdown();
    await Promise.all(running.map((r) => r.done));
    await connection?.close();
    await stack?.stop();
  });

  async function chargeOnWorker(longCalls: boolean) {
    const taskQueue = `long-calls-${longCalls}-${process.pid}`;
    const tools = createToolRegistry(
      exampleTools(sandboxUrlsFromEnv(stack.workerEnv)).map((t) => (t.name === 'charge' ? { ...t, longCalls } : t)),
    );
    const worker = await Worker.create({
      connection,
      namespace: stack.server.namespace,
      taskQueue,
      // The stack's bundle of the example workflows (kept between test files): bundling again costs seconds.
      workflowBundle: { codePath: stack.workerEnv.RETRYSAFE_WORKFLOW_BUNDLE },
      plugins: [retrysafePlugin({ tools, ledger: stack.ledger })],
    });
    running.push({ worker, done: worker.run() });
    const client = new Client({ connection, namespace: stack.server.namespace });
    const retrysafe = new RetrysafeClient(client, { taskQueue, tools, ledger: stack.ledger });
    const eventId = uniqueEvent(longCalls ? 'long' : 'short');
    const { operation: _op, ...input } = acmeCharge(eventId, 990);
    const run = await retrysafe.startRun(retrysafeChargeWorkflow, { tenant: 'acme', eventId, input });
    const result = await run.result();
    const events = (await run.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    const markers = events.filter((e) => e.markerRecordedEventAttributes).length;
    return { result, scheduled, markers };
  }

  it('acts on a longCalls tool in an activity: an actOnRecord task in the history, one charge confirmed', async () => {
    const { result, scheduled, markers } = await chargeOnWorker(true);
    assert.equal(result.status, 'confirmed');
    assert.deepEqual(scheduled, ['actOnRecord']);
    assert.equal(markers, 1, 'only the preparation is a local activity (prepareAndAct, which defers the act)');
  });

  it('acts on any other tool in the run’s workflow task: no activity task, the act a marker', async () => {
    const { result, scheduled, markers } = await chargeOnWorker(false);
    assert.equal(result.status, 'confirmed');
    assert.deepEqual(scheduled, []);
    assert.equal(markers, 1, 'the preparation and the act, one local activity');
  });
});
