import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { RetrysafeClient } from '../../client';
import { defineTool } from '../../policies/tool';
import { committed } from '../../policies/tool-outcome';
import { createToolRegistry } from '../../policies/tool-registry';
import { startDevServer, type DevServer } from '../../cli/dev/dev-server';
import { createWorker } from '../../workers/create-worker';
import { claimUpdate, dispatchReportSignal, type ActionInput } from '../../messages/action';

/**
 * A plain re-claim that reaches the action in the same workflow task as its owner's dispatch report answers with
 * what the report made of the action, not one step behind. The owner's part is played by hand, as its activity
 * would play it: a claim that asks to send, then a signed-off report of the send. To put the report and the
 * re-claim in one task, no workflow worker runs between them.
 */
describe('a re-claim in the same workflow task as the owner’s dispatch report', () => {
  let dir: string;
  let server: DevServer;
  let connection: NativeConnection;
  let clientConnection: Connection;
  let retrysafe: RetrysafeClient;
  const taskQueue = 'current-answers';

  const tools = createToolRegistry([
    defineTool({
      name: 'post',
      version: 1,
      description: 'A post; its owner sends it in this test.',
      input: z.strictObject({ n: z.number() }),
      kind: 'mutation',
      dedupe: 'idempotency-key',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      summarize: (i) => `post ${i.n}`,
      execute: async () => committed('post-by-action'),
    }),
  ]);

  const workflowWorker = () =>
    createWorker({
      connection,
      namespace: server.namespace,
      config: { taskQueue, crashAt: [], trustedApprovalKeys: {}, operatorScopes: {}, logLevel: 'warn' },
      ledger: 'none',
      tools,
      // Workflows and their local activities only: the owner's send is the test's.
      tuning: { enableNonLocalActivities: false },
    });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-current-'));
    server = await startDevServer({ dbFile: path.join(dir, 'temporal.sqlite'), port: 0, uiPort: null });
    connection = await NativeConnection.connect({ address: server.address });
    clientConnection = await Connection.connect({ address: server.address });
    const client = new Client({ connection: clientConnection, namespace: server.namespace });
    retrysafe = new RetrysafeClient(client, { taskQueue, tools });
  });
  after(async () => {
    await clientConnection?.close();
    await connection?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers confirmed, not dispatching, when the report and the claim arrive together', async () => {
    const client = retrysafe.client;
    let wf = await workflowWorker();
    let wfRun = wf.run();
    try {
      const owner = 'run:acme:current-1';
      const intent = tools.parseIntent({ operation: 'post', n: 1 });
      const action: ActionInput = {
        key: 'post:v1:acme:current-1',
        intent,
        requestHash: tools.hash(intent),
        tenant: 'acme',
        owner,
      };
      const granted = await client.workflow.executeUpdateWithStart(claimUpdate, {
        args: [{ requestHash: action.requestHash, claimant: owner, send: { token: 'token-1', attempt: 1 } }],
        startWorkflowOperation: new WithStartWorkflowOperation('actionWorkflow', {
          workflowId: action.key,
          taskQueue,
          args: [action],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
      assert.equal(granted.sendGranted, true, 'the owner sends');

      // No workflow worker: the report and the re-claim wait for one, in one workflow task.
      wf.shutdown();
      await wfRun;
      await client.workflow.getHandle(action.key).signal(dispatchReportSignal, {
        token: 'token-1',
        report: {
          kind: 'outcome',
          outcome: { status: 'confirmed', providerRef: 'post-by-owner', record: null, via: 'send', sends: 1 },
        },
      });
      const again = retrysafe.claimAction({ tenant: 'acme', eventId: 'current-1' }, { operation: 'post', n: 1 });
      // Long enough for the update to reach the server and join the pending workflow task.
      await new Promise((r) => setTimeout(r, 1_500));

      wf = await workflowWorker();
      wfRun = wf.run();
      const answer = await again;
      assert.equal(answer.status, 'confirmed', JSON.stringify(answer.audit.map((a) => a.to)));
      assert.equal(answer.providerRef, 'post-by-owner');
      const { events } = await client.workflow.getHandle(action.key).fetchHistory();
      const tasksAfterSignal = (events ?? [])
        .slice((events ?? []).findIndex((e) => e.workflowExecutionSignaledEventAttributes))
        .filter((e) => e.workflowTaskCompletedEventAttributes).length;
      assert.equal(tasksAfterSignal, 1, 'the report and the claim were applied in one workflow task');
    } finally {
      wf.shutdown();
      await Promise.allSettled([wfRun]);
    }
  });
});
