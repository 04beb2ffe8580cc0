/**
 * Two tools a user might write for their own agent, defined only here with the public tool API:
 *   post-chat-message  an HTTP chat provider with no idempotency key, looked up by our reference (lagging)
 *   record-entry       a row in the application's own SQLite database, committed in one transaction
 *                      with its dedupe record keyed by the action key; void-entry undoes it
 */
import { Database } from 'node-sqlite3-wasm';
import { z } from 'zod';
import { absent, committed, defineTool, found, outcomeOfError, outcomeOfResponse, providerRequest } from 'retrysafe';

export function chatTools(baseUrl: string) {
  const postChatMessage = defineTool({
    name: 'post-chat-message',
    version: 1,
    description: 'Post one message to a chat channel.',
    input: z.strictObject({ channel: z.string().trim().min(1).max(80), text: z.string().trim().min(1).max(4_000) }),
    kind: 'mutation',
    dedupe: 'lookup',
    readAfterWriteLagMs: 10_000,
    riskClass: 'routine-message',
    summarize: (i) => `post to #${i.channel}: ${i.text.slice(0, 40)}`,
    async execute(i, ctx) {
      try {
        const res = await providerRequest({
          baseUrl,
          method: 'POST',
          path: '/messages',
          body: { ...i, clientRef: ctx.key },
          timeoutMs: 5_000,
          signal: ctx.signal,
        });
        // The provider answers 200 for a new message: a 200 here is not a replay, so nothing says replayed.
        return outcomeOfResponse(res, (b) => (b as { ts?: unknown }).ts);
      } catch (err) {
        return outcomeOfError(err, 'post message');
      }
    },
    async lookup(_i, ctx) {
      const res = await providerRequest({
        baseUrl,
        method: 'GET',
        path: `/messages?clientRef=${encodeURIComponent(ctx.key)}`,
        timeoutMs: 5_000,
        signal: ctx.signal,
      });
      if (res.status !== 200) throw new Error(`lookup answered HTTP ${res.status}`);
      const [first] = (res.body as { messages: Array<{ ts: string }> }).messages;
      return first ? found(first.ts) : absent();
    },
  });
  return [postChatMessage];
}

const Entry = z.strictObject({ account: z.string().trim().min(1).max(80), amountCents: z.number().int().positive() });

export function ledgerTools(dbFile: string) {
  const open = () => {
    const db = new Database(dbFile);
    db.exec(`CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, account TEXT NOT NULL, amount_cents INTEGER NOT NULL, voided_by TEXT);
             CREATE TABLE IF NOT EXISTS dedupe (action_key TEXT PRIMARY KEY, ref TEXT NOT NULL)`);
    return db;
  };
  /** The business write and its dedupe record commit together; a retry finds the record or commits both. */
  const once = (key: string, write: (db: Database) => string) => {
    const db = open();
    try {
      db.run('BEGIN IMMEDIATE');
      const seen = db.get('SELECT ref FROM dedupe WHERE action_key = ?', [key]) as { ref: string } | null;
      if (seen) {
        db.run('ROLLBACK');
        return committed(seen.ref, null, true);
      }
      const ref = write(db);
      db.run('INSERT INTO dedupe (action_key, ref) VALUES (?, ?)', [key, ref]);
      db.run('COMMIT');
      return committed(ref);
    } catch (err) {
      if (db.inTransaction) db.run('ROLLBACK');
      throw err;
    } finally {
      db.close();
    }
  };
  const lookup = (key: string) => {
    const db = open();
    try {
      const seen = db.get('SELECT ref FROM dedupe WHERE action_key = ?', [key]) as { ref: string } | null;
      return seen ? found(seen.ref) : absent();
    } finally {
      db.close();
    }
  };
  const recordEntry = defineTool({
    name: 'record-entry',
    version: 1,
    description: 'Record a ledger entry for an account.',
    input: Entry,
    kind: 'mutation',
    dedupe: 'transactional',
    readAfterWriteLagMs: 0,
    riskClass: 'routine-message',
    summarize: (i) => `ledger entry of ${i.amountCents} for ${i.account}`,
    compensation: { tool: 'void-entry', input: (_i, done) => ({ entryId: done.providerRef }) },
    execute: async (i, ctx) =>
      once(ctx.key, (db) => {
        db.run('INSERT INTO entries (account, amount_cents) VALUES (?, ?)', [i.account, i.amountCents]);
        return `entry-${(db.get('SELECT last_insert_rowid() AS id') as { id: number }).id}`;
      }),
    lookup: async (_i, ctx) => lookup(ctx.key),
  });
  const voidEntry = defineTool({
    name: 'void-entry',
    version: 1,
    description: 'Void a ledger entry.',
    input: z.strictObject({ entryId: z.string().regex(/^entry-\d+$/) }),
    kind: 'mutation',
    dedupe: 'transactional',
    readAfterWriteLagMs: 0,
    riskClass: 'routine-message',
    summarize: (i) => `void ${i.entryId}`,
    execute: async (i, ctx) =>
      once(ctx.key, (db) => {
        db.run('UPDATE entries SET voided_by = ? WHERE id = ?', [ctx.key, Number(i.entryId.slice('entry-'.length))]);
        return `void-${i.entryId}`;
      }),
    lookup: async (_i, ctx) => lookup(ctx.key),
  });
  return [recordEntry, voidEntry];
}

export function byoTools(env: { chatUrl: string; ledgerDb: string }) {
  return [...chatTools(env.chatUrl), ...ledgerTools(env.ledgerDb)];
}
