import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { RetrysafeClient } from '../../client';
import { createRetrysafeMcpServer } from '../../adapters/mcp/mcp-server';
import { exampleRegistry } from '../../examples/tools';
import { claimUpdate, type ActionInput, type ActionSnapshot } from '../../messages/action';
import { errorCodeOf } from '../../policies/errors';
import { FAST_DELETION_DYNAMIC_CONFIG } from '../../cli/dev/dev-server';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { countWhere } from '../support/ledger';
import { uniqueEvent } from '../support/renewal-input';
import { runOpsProcess } from '../support/ops-process';
import { deleteWorkflow as deleteWorkflowOf } from '../support/delete-workflow';

/**
 * The worker, not the claimant, keeps the ledger's promise. The stack keeps the embedded SQLite ledger; the
 * application's client here is built as the README shows it, without the ledger. A key-less email is claimed and
 * confirmed, its workflow deleted (as retention deletes it), and the key claimed again through that client, a raw
 * Temporal update-with-start and the MCP server: each new action workflow asks the worker's ledger first and sends
 * nothing. Emails are counted at the provider.
 */
describe('the worker enforces the ledger, whoever claims', () => {
  let stack: Stack;
  let dir: string;
  let app: RetrysafeClient;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-ledger-worker-'));
    stack = await startStack({
      providerKinds: ['email'],
      ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}`,
      devServerDynamicConfig: FAST_DELETION_DYNAMIC_CONFIG,
    });
    await stack.startWorker();
    const urls = { email: stack.providers.email.url } as Parameters<typeof exampleRegistry>[0];
    app = new RetrysafeClient(stack.client, {
      taskQueue: stack.taskQueue,
      tools: exampleRegistry(urls),
      ledger: stack.ledger,
    });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const receipt = (to: string) => ({
    operation: 'send-email',
    to,
    subject: 'Your receipt',
    body: 'Thank you for your order.',
    template: 'renewal-receipt',
  });

  async function emailsFor(key: string): Promise<number> {
    return countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.reference === key);
  }

  /** Deletes the key's workflow, if it has one (a claim answered from a settled row starts none). */
  const deleteWorkflow = (key: string) =>
    deleteWorkflowOf(stack.client, stack.server.namespace, key).catch((err: unknown) => {
      if (!/not found/i.test((err as Error).message)) throw err;
    });

  /** Claims as any Temporal client can, with no retrysafe code on its side: update-with-start on the key. */
  async function rawClaim(eventId: string, intent: Record<string, unknown>): Promise<ActionSnapshot> {
    const registry = exampleRegistry();
    const parsed = registry.parseIntent(intent);
    const input: ActionInput = {
      key: `send-email:v1:acme:${eventId}`,
      intent: parsed,
      requestHash: registry.hash(parsed),
      tenant: 'acme',
      owner: 'client:raw',
    };
    return stack.client.workflow.executeUpdateWithStart(claimUpdate, {
      args: [{ requestHash: input.requestHash, claimant: 'client:raw' }],
      startWorkflowOperation: new WithStartWorkflowOperation('actionWorkflowV3', {
        workflowId: input.key,
        taskQueue: stack.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  }

  it('sends one email across a deleted workflow and three more claims, answering each from the ledger', async () => {
    const eventId = uniqueEvent('ledger-worker');
    const intent = receipt('pat@example.com');
    const first = await app.claimAction({ tenant: 'acme', eventId }, intent, { wait: true, timeoutMs: 30_000 });
    assert.equal(first.status, 'confirmed', JSON.stringify(first.audit));
    assert.equal(await emailsFor(first.key), 1);
    const row = await stack.ledger!.get(first.key);
    assert.equal(row?.status, 'confirmed');
    assert.match(row?.holder ?? '', /^action:/, 'the action workflow holds its row');

    // 1. The same client, without the ledger: the new workflow asks the worker's ledger and sends nothing.
    await deleteWorkflow(first.key);
    const again = await app.claimAction({ tenant: 'acme', eventId }, intent, { wait: true, timeoutMs: 30_000 });
    assert.equal(again.status, 'confirmed');
    assert.equal(again.providerRef, first.providerRef);
    // Straight from the row: the claim read it first, and no workflow was started for a settled key.
    assert.equal(again.source, 'ledger');
    assert.match(again.audit.at(-1)!.reason, /^provider send: /);
    await assert.rejects(stack.client.workflow.getHandle(first.key).describe(), /not found/i);
    assert.equal(again.sends, 0);
    assert.equal(await emailsFor(first.key), 1);

    // 2. A raw update-with-start of the engine's workflow type.
    await deleteWorkflow(first.key);
    const raw = await rawClaim(eventId, intent);
    assert.equal(raw.status, 'confirmed', 'the claim is answered after the ledger was asked, with its outcome');
    assert.equal(raw.providerRef, first.providerRef);
    assert.equal(await emailsFor(first.key), 1);

    // 3. An agent through the MCP server, built on the same client.
    await deleteWorkflow(first.key);
    const server = createRetrysafeMcpServer({
      retrysafe: app,
      registry: app.tools,
      tenant: 'acme',
      claimant: 'test-agent',
      waitMs: 30_000,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const mcp = new McpClient({ name: 'test-agent', version: '1.0.0' });
    await mcp.connect(clientSide);
    try {
      const { operation: _operation, ...args } = intent;
      const called = await mcp.callTool({ name: 'send-email', arguments: { ...args, eventId } });
      const result = called.structuredContent as { status: string; providerRef?: string };
      assert.equal(result.status, 'confirmed', JSON.stringify(called));
      assert.equal(result.providerRef, first.providerRef);
    } finally {
      await mcp.close();
      await server.close();
    }
    assert.equal(await emailsFor(first.key), 1, 'one email at the provider after four claims');
    assert.deepEqual(await stack.ledger!.alarms({ key: first.key }), [], 'no write was refused: none was tried');
  });

  it('refuses another request under a key the ledger knows, from a client and a raw update-with-start, sending nothing', async () => {
    const eventId = uniqueEvent('ledger-worker-mismatch');
    const first = await app.claimAction({ tenant: 'acme', eventId }, receipt('ada@example.com'), {
      wait: true,
      timeoutMs: 30_000,
    });
    assert.equal(first.status, 'confirmed');
    await deleteWorkflow(first.key);
    for (const claim of [
      () => app.claimAction({ tenant: 'acme', eventId }, receipt('eve@example.com')),
      () => rawClaim(eventId, receipt('eve@example.com')),
    ]) {
      await assert.rejects(claim(), (err: unknown) => {
        assert.equal(errorCodeOf(err), 'IntentMismatch', String(err));
        assert.match(JSON.stringify(err), /ledger/);
        return true;
      });
      await deleteWorkflow(first.key).catch(() => undefined);
    }
    assert.equal(await emailsFor(first.key), 1);
    assert.equal((await stack.ledger!.get(first.key))?.requestHash, first.requestHash, 'the first request stays');
  });

  it('shows a write the ledger refused as an alarm, in ops alarms and ops show', async () => {
    const eventId = uniqueEvent('ledger-worker-alarm');
    const first = await app.claimAction({ tenant: 'acme', eventId }, receipt('bo@example.com'), {
      wait: true,
      timeoutMs: 30_000,
    });
    // A status from a workflow that does not hold the row (one recorded before the worker claimed rows, say).
    const write = await stack.ledger!.recordStatus({
      key: first.key,
      seq: 7,
      status: 'failed',
      at: new Date().toISOString(),
      reason: 'a stale writer',
      holder: 'action:not-the-holder',
    });
    assert.equal(write.applied, false);
    assert.equal((await stack.ledger!.get(first.key))?.status, 'confirmed', 'the refused write changed nothing');
    const env = { RETRYSAFE_LEDGER: `sqlite:${path.join(dir, 'ledger.sqlite')}` };
    const listed = await runOpsProcess(stack, ['alarms', '--key', first.key, '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const alarms = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; detail: string });
    assert.deepEqual(
      alarms.map((a) => a.kind),
      ['not-holder'],
    );
    assert.match(alarms[0].detail, /failed \(seq 7\) by action:not-the-holder was refused/);
    const shown = await runOpsProcess(stack, ['show', first.key], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /Ledger alarms [^\n]*\n[^\n]*KIND[^\n]*\n[^\n]*not-holder .*action:not-the-holder/);
  });
});
