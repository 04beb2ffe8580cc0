/**
 * An example tool on a real server through its official client: an order row in the application's own PostgreSQL,
 * written with `pg`. Its contract is `transactional`: the order and its dedupe record (keyed by the action key)
 * commit in one transaction, so a crash anywhere leaves both or neither, and a second execution with the same key
 * finds the record and returns the first order. The lookup reads the record by key.
 *
 *   BEGIN
 *   INSERT INTO retrysafe_effects (action_key, …) ON CONFLICT DO NOTHING   ─ taken: ROLLBACK, answer the first order
 *   INSERT INTO orders (…) RETURNING id
 *   UPDATE retrysafe_effects SET ref = 'order-<id>'
 *   COMMIT
 *
 * Two executions racing on one key: the second INSERT waits for the first transaction and then finds its row.
 */
import { Client } from 'pg';
import { z } from 'zod';
import { absent, committed, defineTool, found, rejected } from 'retrysafe';

/** The worker's setting: the orders database's URL. */
export const ORDERS_DATABASE_ENV = 'RETRYSAFE_ORDERS_DATABASE_URL';

export const ORDERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS orders (
  id BIGSERIAL PRIMARY KEY,
  customer TEXT NOT NULL,
  sku TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS retrysafe_effects (
  action_key TEXT PRIMARY KEY,
  ref TEXT NOT NULL,
  committed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);`;

export const RecordOrder = z.strictObject({
  customer: z.string().trim().min(1).max(80),
  sku: z.string().trim().min(1).max(40),
  quantity: z.number().int().positive().max(1_000),
});

/** One connection per call, closed afterwards: an execution that dies takes only its own connection with it. */
async function withClient<T>(connectionString: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

let schemaReady: Promise<void> | undefined;
function ensureSchema(connectionString: string): Promise<void> {
  schemaReady ??= withClient(connectionString, async (client) => {
    await client.query(ORDERS_SCHEMA);
  }).catch((err: unknown) => {
    schemaReady = undefined;
    throw err;
  });
  return schemaReady;
}

export function ordersDatabaseTools(connectionString: string) {
  const recordOrder = defineTool({
    name: 'record-order',
    version: 1,
    description: "Record an order in the application's PostgreSQL database.",
    input: RecordOrder,
    kind: 'mutation',
    dedupe: 'transactional',
    readAfterWriteLagMs: 0,
    riskClass: 'routine-message',
    summarize: (i) => `order of ${i.quantity} × ${i.sku} for ${i.customer}`,
    async execute(i, ctx) {
      await ensureSchema(connectionString);
      return withClient(connectionString, async (client) => {
        await client.query('BEGIN');
        try {
          const claimed = await client.query(
            "INSERT INTO retrysafe_effects (action_key, ref) VALUES ($1, '') ON CONFLICT (action_key) DO NOTHING RETURNING action_key",
            [ctx.key],
          );
          if (claimed.rowCount === 0) {
            await client.query('ROLLBACK');
            const { rows } = await client.query<{ ref: string }>(
              'SELECT ref FROM retrysafe_effects WHERE action_key = $1',
              [ctx.key],
            );
            return committed(rows[0].ref, null, true);
          }
          const order = await client.query<{ id: string }>(
            'INSERT INTO orders (customer, sku, quantity) VALUES ($1, $2, $3) RETURNING id',
            [i.customer, i.sku, i.quantity],
          );
          const ref = `order-${order.rows[0].id}`;
          await client.query('UPDATE retrysafe_effects SET ref = $2 WHERE action_key = $1', [ctx.key, ref]);
          await client.query('COMMIT');
          return committed(ref);
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          // The database judged the row itself (SQLSTATE class 22, a data exception, or 23, a constraint such as
          // the quantity CHECK): rolled back, and the same request would fail again. Anything else (a lost
          // connection, a serialization failure) is thrown: the transaction makes a resend with the key safe.
          const code = (err as { code?: unknown }).code;
          if (typeof code === 'string' && /^2[23]/.test(code)) {
            return rejected('invalid', `PostgreSQL refused the order (SQLSTATE ${code}): ${(err as Error).message}`);
          }
          throw err;
        }
      });
    },
    async lookup(_i, ctx) {
      await ensureSchema(connectionString);
      return withClient(connectionString, async (client) => {
        const { rows } = await client.query<{ ref: string }>(
          'SELECT ref FROM retrysafe_effects WHERE action_key = $1',
          [ctx.key],
        );
        return rows[0] ? found(rows[0].ref) : absent();
      });
    },
  });
  return [recordOrder];
}
