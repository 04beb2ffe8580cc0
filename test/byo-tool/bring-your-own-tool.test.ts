import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Database } from 'node-sqlite3-wasm';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { startServerProcess } from '../support/server-process';
import { byoTools } from './tools';
import { payoutWorkflow } from './workflows';
import { RetrysafeClient, errorCodeOf } from 'retrysafe';

/**
 * A user's own tools, defined only in this folder with the public API and registered on a worker of
 * their own (worker.ts): a chat provider in its own process with a lagging lookup, and a transactional
 * ledger in SQLite. Effects are counted at the provider and in the database, never in logs.
 */

async function startChat(lagMs: number): Promise<{
  url: string;
  proc: ChildProcess;
  stats(): Promise<{ posts: number; emptyLookups: number; byRef: Record<string, number> }>;
}> {
  const { url, proc } = await startServerProcess(path.join(__dirname, 'chat-server.ts'), ['--lag-ms', String(lagMs)]);
  return { url, proc, stats: async () => (await fetch(`${url}/admin/stats`)).json() as never };
}

describe('a tool brought by the user, registered on their own worker', () => {
  let stack: Stack;
  let chat: Awaited<ReturnType<typeof startChat>>;
  let dir: string;
  let client: RetrysafeClient;
  let env: Record<string, string>;
  const rows = (sql: string, params: unknown[] = []) => {
    const db = new Database(path.join(dir, 'ledger.sqlite'));
    try {
      return db.all(sql, params as never) as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-byo-'));
    // Longer than any recovery (heartbeat timeout, restart): the retry's first lookup always lands inside the lag.
    chat = await startChat(10_000);
    stack = await startStack({
      providerKinds: [],
      worker: { entry: 'test/byo-tool/worker.ts', workflowsPath: require.resolve('./workflows') },
    });
    env = { CHAT_URL: chat.url, LEDGER_DB: path.join(dir, 'ledger.sqlite') };
    client = new RetrysafeClient(stack.client, {
      taskQueue: stack.taskQueue,
      tools: byoTools({ chatUrl: chat.url, ledgerDb: env.LEDGER_DB }),
    });
  });
  after(async () => {
    await stack?.stop();
    chat?.proc.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'posts one chat message when the worker is SIGKILLed after the provider commits, waiting out the lookup lag',
    { timeout: 120_000 },
    async () => {
      const crashing = await stack.startWorker({ env, crashAt: 'after-commit:post-chat-message', name: 'chat-crash' });
      const intent = { operation: 'post-chat-message', channel: 'payouts', text: 'Paid 4990 to acct-1' };
      const claimed = client.claimAction({ tenant: 'acme', eventId: 'payout-1' }, intent, { wait: true });
      await crashing.exited;
      await stack.startWorker({ env, name: 'chat-recover' });
      const action = await claimed;
      assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
      assert.equal(action.key, 'post-chat-message:v1:acme:payout-1');
      const stats = await chat.stats();
      assert.equal(stats.byRef[action.key], 1, 'one message at the provider');
      assert.ok(
        stats.emptyLookups >= 1,
        'the retry looked up inside the lag and did not take the empty answer as absence',
      );
      assert.equal(stats.posts, 1, 'nothing was re-sent');
    },
  );

  it('refuses a changed request under the same key, with nothing sent', async () => {
    const before = (await chat.stats()).posts;
    await assert.rejects(
      client.claimAction(
        { tenant: 'acme', eventId: 'payout-1' },
        { operation: 'post-chat-message', channel: 'payouts', text: 'Paid 9990 to acct-1' },
      ),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
    );
    assert.equal((await chat.stats()).posts, before);
  });

  it('records one ledger row when the worker dies after the transaction commits', { timeout: 120_000 }, async () => {
    await Promise.all(stack.workers.map((w) => w.kill()));
    const crashing = await stack.startWorker({ env, crashAt: 'after-commit:record-entry', name: 'ledger-crash' });
    const claimed = client.claimAction(
      { tenant: 'acme', eventId: 'entry-1' },
      { operation: 'record-entry', account: 'acct-7', amountCents: 1200 },
      { wait: true },
    );
    await crashing.exited;
    await stack.startWorker({ env, name: 'ledger-recover' });
    const action = await claimed;
    assert.equal(action.status, 'confirmed');
    assert.deepEqual(rows('SELECT account, amount_cents FROM entries WHERE account = ?', ['acct-7']), [
      { account: 'acct-7', amount_cents: 1200 },
    ]);
    assert.deepEqual(rows('SELECT action_key FROM dedupe WHERE action_key = ?', [action.key]), [
      { action_key: action.key },
    ]);
  });

  it('compensates a recorded entry with its own key when a later step is rejected', { timeout: 120_000 }, async () => {
    const run = await stack.retrysafe.startRun(payoutWorkflow, {
      tenant: 'acme',
      eventId: 'payout-2',
      input: {
        account: 'acct-9',
        amountCents: 700,
        channel: 'closed',
      },
    });
    const result = (await run.result()) as {
      status: string;
      entry: string;
      compensations: Array<{ forKey: string; compensationKey: string; status: string }>;
    };
    assert.equal(result.status, 'compensated');
    assert.deepEqual(result.compensations, [
      {
        forKey: 'record-entry:v1:acme:payout-2',
        compensationKey: 'void-entry:v1:acme:payout-2',
        status: 'compensated',
      },
    ]);
    const [entry] = rows('SELECT voided_by FROM entries WHERE account = ?', ['acct-9']);
    assert.equal(entry.voided_by, 'void-entry:v1:acme:payout-2');
    const undo = await client.getAction('void-entry:v1:acme:payout-2');
    assert.equal(undo?.status, 'confirmed');
    assert.equal(undo?.sends, 1);
  });

  it('derives the undo key from the step of the action it undoes', { timeout: 120_000 }, async () => {
    const run = await stack.retrysafe.startRun(payoutWorkflow, {
      tenant: 'acme',
      eventId: 'payout-3',
      input: {
        account: 'acct-10',
        amountCents: 800,
        channel: 'closed',
        entryStep: 'fee',
      },
    });
    const result = (await run.result()) as {
      status: string;
      compensations: Array<{ forKey: string; compensationKey: string }>;
    };
    assert.equal(result.status, 'compensated');
    assert.deepEqual(
      result.compensations.map((c) => [c.forKey, c.compensationKey]),
      [['record-entry:v1:acme:payout-3:fee', 'void-entry:v1:acme:payout-3:fee-undo']],
    );
    assert.equal(
      rows('SELECT voided_by FROM entries WHERE account = ?', ['acct-10'])[0].voided_by,
      'void-entry:v1:acme:payout-3:fee-undo',
    );
  });

  it('answers a repeat claim with the action as it is now, not the first answer', async () => {
    const again = await client.claimAction(
      { tenant: 'acme', eventId: 'payout-1' },
      { operation: 'post-chat-message', channel: 'payouts', text: 'Paid 4990 to acct-1' },
    );
    assert.equal(again.status, 'confirmed');
    assert.ok(again.providerRef, 'carries the provider reference');
  });
});
