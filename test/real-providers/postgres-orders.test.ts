import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client as PgClient } from 'pg';

import { RetrysafeClient } from '../../client';
import { ORDERS_DATABASE_ENV, ordersDatabaseTools } from '../../examples/orders-database/tools';
import { errorCodeOf } from '../../policies/errors';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { uniqueEvent } from '../support/renewal-input';

/**
 * The orders-database example tool on a real PostgreSQL through `pg`, on its own worker process: the order row and
 * its dedupe record commit in one transaction. Effects are counted in the database's own tables.
 */
describe('record-order on a real PostgreSQL, through pg, with worker processes that are SIGKILLed', () => {
  let pg: PostgresServer;
  let url: string;
  let stack: Stack;
  let client: RetrysafeClient;
  let env: Record<string, string>;

  const rows = async (sql: string, params: unknown[] = []) => {
    const db = new PgClient({ connectionString: url });
    await db.connect();
    try {
      return (await db.query(sql, params)).rows as Array<Record<string, unknown>>;
    } finally {
      await db.end();
    }
  };
  const ordersFor = async (customer: string) =>
    (await rows('SELECT id FROM orders WHERE customer = $1', [customer])).map((r) => `order-${String(r.id)}`);

  before(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase('orders');
    env = { [ORDERS_DATABASE_ENV]: url };
    stack = await startStack({
      providerKinds: [],
      worker: { entry: 'examples/orders-database/worker.ts', workflowsPath: require.resolve('../../workflows') },
    });
    client = new RetrysafeClient(stack.client, { taskQueue: stack.taskQueue, tools: ordersDatabaseTools(url) });
  });
  after(async () => {
    await stack?.stop();
    await pg?.stop();
  });

  const order = (customer: string, quantity = 2) => ({ operation: 'record-order', customer, sku: 'SKU-7', quantity });

  for (const point of ['after-commit', 'before-send'] as const) {
    it(`records one order when the worker is SIGKILLed ${point === 'after-commit' ? 'after the transaction commits, before the outcome is recorded' : 'before it sends'}`, async () => {
      const customer = uniqueEvent(`cus-${point}`);
      const crashing = await stack.startWorker({ env, crashAt: `${point}:record-order`, name: `crash-${point}` });
      const claimed = client.claimAction({ tenant: 'acme', eventId: uniqueEvent(point) }, order(customer), {
        wait: true,
      });
      assert.equal((await crashing.exited).signal, 'SIGKILL');
      // The kill's point, seen in the database: the transaction committed, or nothing was sent.
      assert.equal((await ordersFor(customer)).length, point === 'after-commit' ? 1 : 0);
      const recovery = await stack.startWorker({ env, name: `recover-${point}` });
      try {
        const action = await claimed;
        assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
        const orders = await ordersFor(customer);
        assert.equal(orders.length, 1, 'one order row in PostgreSQL');
        assert.equal(action.providerRef, orders[0]);
        const effects = await rows('SELECT ref FROM retrysafe_effects WHERE action_key = $1', [action.key]);
        assert.deepEqual(effects, [{ ref: orders[0] }], 'its dedupe record, committed with it');
      } finally {
        await recovery.stop();
      }
    });
  }

  it('gives one order to two claims racing on one key, and refuses the key with another order', async () => {
    const worker = await stack.startWorker({ env, name: 'steady' });
    try {
      const customer = uniqueEvent('cus-race');
      const event = { tenant: 'acme', eventId: uniqueEvent('race') };
      const [a, b] = await Promise.all([
        client.claimAction(event, order(customer), { wait: true }),
        client.claimAction(event, order(customer), { wait: true }),
      ]);
      assert.equal(a.status, 'confirmed');
      assert.equal(b.providerRef, a.providerRef);
      assert.deepEqual(await ordersFor(customer), [a.providerRef]);
      await assert.rejects(
        client.claimAction(event, order(customer, 3), { wait: true }),
        (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
      );
      assert.equal((await ordersFor(customer)).length, 1, 'nothing written for the refused claim');
    } finally {
      await worker.stop();
    }
  });
});
