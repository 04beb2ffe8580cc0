import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { uniqueEvent } from '../support/renewal-input';
import { startServerProcess } from '../support/server-process';
import { waitForStatus } from '../support/wait';
import { mcpDeskTools } from './tools';
import { RetrysafeClient } from 'retrysafe';

/**
 * A remote MCP server's tool as a retrysafe provider: the ticket desk (ticket-mcp-server.ts, the official SDK's
 * McpServer in its own process) reached through the official Client by the worker in worker.ts. The worker is
 * SIGKILLed after the desk committed; tickets are counted at the desk.
 */

interface Desk {
  url: string;
  proc: ChildProcess;
  tickets(): Promise<{ id: string; title: string; requestKey?: string }[]>;
}

async function startDesk(flags: string[]): Promise<Desk> {
  const { url, proc } = await startServerProcess(path.join(__dirname, 'ticket-mcp-server.ts'), flags);
  return { url, proc, tickets: async () => (await fetch(`${url}/admin/tickets`)).json() as never };
}

describe('a remote MCP server’s tool as a provider (SIGKILL after the MCP server committed)', () => {
  let stack: Stack;
  let keyed: Desk;
  let keyless: Desk;
  let client: RetrysafeClient;
  let env: Record<string, string>;

  before(async () => {
    [keyed, keyless] = await Promise.all([startDesk([]), startDesk(['--ignore-keys', '--no-find'])]);
    stack = await startStack({
      providerKinds: [],
      worker: { entry: 'test/mcp-provider/worker.ts', workflowsPath: require.resolve('./workflows') },
    });
    env = { DESK_URL: keyed.url, KEYLESS_DESK_URL: keyless.url };
    client = new RetrysafeClient(stack.client, {
      taskQueue: stack.taskQueue,
      tools: mcpDeskTools({ keyed: keyed.url, keyless: keyless.url }),
    });
  });
  after(async () => {
    await stack?.stop();
    keyed?.proc.kill('SIGKILL');
    keyless?.proc.kill('SIGKILL');
  });

  it(
    'a desk that honours the key: one ticket, confirmed, and the same call again gets it',
    { timeout: 120_000 },
    async () => {
      const eventId = uniqueEvent('desk-keyed');
      const doomed = await stack.startWorker({ name: 'doomed-keyed', env, crashAt: 'after-commit:desk-ticket' });
      const claimed = await client.claimAction(
        { tenant: 'acme', eventId },
        { operation: 'desk-ticket', title: 'Printer on fire' },
      );
      assert.equal((await doomed.exited).signal, 'SIGKILL', 'the worker died right after the desk committed');
      const successor = await stack.startWorker({ name: 'successor-keyed', env });
      try {
        const done = await waitForStatus(client, claimed.key, 'confirmed');
        const tickets = (await keyed.tickets()).filter((t) => t.requestKey === claimed.key);
        assert.equal(tickets.length, 1, 'one ticket at the desk');
        assert.equal(done.providerRef, tickets[0].id);
        const again = await client.claimAction(
          { tenant: 'acme', eventId },
          { operation: 'desk-ticket', title: 'Printer on fire' },
          { wait: true },
        );
        assert.deepEqual([again.key, again.providerRef], [claimed.key, done.providerRef], JSON.stringify(again));
        assert.equal((await keyed.tickets()).filter((t) => t.requestKey === claimed.key).length, 1);
      } finally {
        await successor.stop();
      }
    },
  );

  it(
    'a desk that ignores keys and cannot be asked: unknown, then needs_review, and never a second ticket',
    { timeout: 120_000 },
    async () => {
      const before = (await keyless.tickets()).length;
      const eventId = uniqueEvent('desk-keyless');
      const doomed = await stack.startWorker({ name: 'doomed-keyless', env, crashAt: 'after-commit:keyless-ticket' });
      const claimed = await client.claimAction(
        { tenant: 'acme', eventId },
        { operation: 'keyless-ticket', title: 'Badge reader offline' },
      );
      assert.equal((await doomed.exited).signal, 'SIGKILL');
      const successor = await stack.startWorker({ name: 'successor-keyless', env });
      try {
        const review = await waitForStatus(client, claimed.key, 'needs_review', { timeoutMs: 90_000 });
        assert.ok(
          review.audit.some((a) => a.to === 'unknown'),
          'the lost reply was unknown before it went to a person',
        );
        assert.equal((await keyless.tickets()).length - before, 1, 'exactly one ticket: nothing was resent');
      } finally {
        await successor.stop();
      }
    },
  );

  it(
    'control: a contract taken from the server’s own idempotentHint, on the desk that ignores keys, opens two tickets',
    { timeout: 120_000 },
    async () => {
      const before = (await keyless.tickets()).length;
      const eventId = uniqueEvent('desk-trusting');
      const doomed = await stack.startWorker({ name: 'doomed-trusting', env, crashAt: 'after-commit:trusting-ticket' });
      const claimed = await client.claimAction(
        { tenant: 'acme', eventId },
        { operation: 'trusting-ticket', title: 'Door stuck' },
      );
      assert.equal((await doomed.exited).signal, 'SIGKILL');
      const successor = await stack.startWorker({ name: 'successor-trusting', env });
      try {
        await waitForStatus(client, claimed.key, 'confirmed');
        assert.equal((await keyless.tickets()).length - before, 2, 'the resend under the key was a second ticket');
      } finally {
        await successor.stop();
      }
    },
  );

  it(
    'an error result after the desk wrote the ticket is ambiguous, not a refusal: the keyed resend confirms the one ticket',
    { timeout: 60_000 },
    async () => {
      const eventId = uniqueEvent('desk-fail-after-write');
      const worker = await stack.startWorker({ name: 'worker-fail-after-write', env });
      try {
        const claimed = await client.claimAction(
          { tenant: 'acme', eventId },
          { operation: 'desk-ticket', title: 'fail-after-write: projector' },
        );
        const done = await waitForStatus(client, claimed.key, ['confirmed', 'failed']);
        assert.equal(done.status, 'confirmed', JSON.stringify(done.audit));
        const tickets = (await keyed.tickets()).filter((t) => t.requestKey === claimed.key);
        assert.deepEqual(
          tickets.map((t) => t.id),
          [done.providerRef],
          'one ticket, the one confirmed',
        );
      } finally {
        await worker.stop();
      }
    },
  );
});
