import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import Stripe from 'stripe';

import { RetrysafeClient } from '../../client';
import { KEY_METADATA, STRIPE_ENV, stripeTools, type StripeSettings } from '../../examples/stripe-payments/tools';
import { startLocalstripe, type LocalstripeServer } from '../../scripts/lib/localstripe-server';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolveLocalstripe } from '../../scripts/toolchain/resolve-localstripe';
import { missingPiece } from '../../cli/toolchain/toolchain-error';
import { startReplyCuttingProxy } from '../support/reply-cutting-proxy';
import { uniqueEvent } from '../support/renewal-input';
import { skipWithout } from '../../scripts/lib/required-servers';

/**
 * stripe-charge on localstripe (a fake Stripe in Python) through the `stripe` SDK, on its own worker processes.
 * localstripe ignores Idempotency-Key, so it is the honest adversary: the metadata lookup keeps a retry from charging
 * twice, and the key-only contract, which is what Stripe documents, charges twice there. Charges are counted at
 * localstripe.
 */
const localstripe = resolveLocalstripe({ install: false }).then(
  (found) => ({ found }),
  (err: unknown) => ({
    why: `localstripe is not here (${missingPiece(err)}): npm run setup:toolchain installs it with python3 and pip`,
  }),
);

describe('stripe-charge on localstripe, through the stripe SDK, with worker processes that are SIGKILLed', async () => {
  const resolved = await localstripe;
  const skip = skipWithout('why' in resolved ? resolved.why : false);
  let server: LocalstripeServer;
  let admin: Stripe;
  let stack: Stack;
  let client: RetrysafeClient;
  let settings: StripeSettings;
  let env: Record<string, string>;
  let customer: string;
  let card: string;
  let decliningCard: string;

  /** Every charge at localstripe carrying `key`, by status. */
  const chargesWith = async (key: string) => {
    const charges: Stripe.Charge[] = [];
    for await (const charge of admin.charges.list({ limit: 100 })) {
      if (charge.metadata?.[KEY_METADATA] === key) charges.push(charge);
    }
    return {
      succeeded: charges.filter((c) => c.status === 'succeeded').map((c) => c.id),
      failed: charges.filter((c) => c.status === 'failed').map((c) => c.id),
    };
  };

  before(async () => {
    if (skip) return;
    server = await startLocalstripe({ localstripe: 'found' in resolved ? resolved.found : undefined });
    const base = new URL(server.url);
    admin = new Stripe(server.apiKey, { host: base.hostname, port: base.port, protocol: 'http' });
    customer = (await admin.customers.create({ name: 'Ada Renewals' })).id;
    card = (await admin.paymentMethods.attach('pm_card_visa', { customer })).id;
    decliningCard = (await admin.paymentMethods.attach('pm_card_chargeCustomerFail', { customer })).id;
    await admin.customers.update(customer, { invoice_settings: { default_payment_method: card } });
    // A long history: the lookup has to page past these (localstripe lists oldest first, 100 a page at most).
    for (let n = 0; n < 120; n++) {
      await admin.charges.create({ amount: 100 + n, currency: 'eur', customer, description: `earlier ${n}` });
    }
    settings = { apiKey: server.apiKey, apiBase: server.url };
    env = { [STRIPE_ENV.apiBase]: server.url, [STRIPE_ENV.secretKey]: server.apiKey };
    stack = await startStack({
      providerKinds: [],
      worker: { entry: 'examples/stripe-payments/worker.ts', workflowsPath: require.resolve('../../workflows') },
    });
    client = new RetrysafeClient(stack.client, { taskQueue: stack.taskQueue, tools: stripeTools(settings) });
  });
  after(async () => {
    await stack?.stop();
    await server?.stop();
  });

  const charge = (eventId: string, extra: { paymentMethod?: string } = {}) => ({
    operation: 'stripe-charge',
    customerId: customer,
    amountCents: 1999,
    currency: 'EUR',
    description: `renewal ${eventId}`,
    ...extra,
  });

  for (const point of ['after-commit', 'before-send'] as const) {
    it(
      `charges once under the lookup contract when the worker is SIGKILLed ${point === 'after-commit' ? 'after localstripe charged, before the outcome is recorded' : 'before it sends'}`,
      { skip },
      async () => {
        const eventId = uniqueEvent(point);
        const key = `stripe-charge:v1:acme:${eventId}`;
        const crashing = await stack.startWorker({ env, crashAt: `${point}:stripe-charge`, name: `crash-${point}` });
        const claimed = client.claimAction({ tenant: 'acme', eventId }, charge(eventId), { wait: true });
        assert.equal((await crashing.exited).signal, 'SIGKILL');
        assert.equal((await chargesWith(key)).succeeded.length, point === 'after-commit' ? 1 : 0, 'at the kill');
        const recovery = await stack.startWorker({ env, name: `recover-${point}` });
        try {
          const action = await claimed;
          assert.equal(action.key, key);
          assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
          const { succeeded } = await chargesWith(key);
          assert.equal(succeeded.length, 1, 'one charge at localstripe');
          assert.equal(action.providerRef, succeeded[0]);
          assert.deepEqual(action.record, { amount: 1999, currency: 'eur', status: 'succeeded' });
          if (point === 'after-commit') {
            // Found by the lookup (on the customer's second page), not charged again.
            assert.match(action.audit.at(-1)?.reason ?? '', /^provider lookup: /, JSON.stringify(action.audit));
          }
        } finally {
          await recovery.stop();
        }
      },
    );
  }

  it(
    'charges twice under the key-only contract when the worker is SIGKILLed after localstripe charged: localstripe ignores the key',
    { skip },
    async () => {
      // Its own task queue: only workers that declare the key-only contract may take this action.
      const taskQueue = 'stripe-key-only';
      const keyOnlyEnv = { ...env, [STRIPE_ENV.contract]: 'idempotency-key', RETRYSAFE_TASK_QUEUE: taskQueue };
      const keyOnly = new RetrysafeClient(stack.client, {
        taskQueue,
        tools: stripeTools({ ...settings, contract: 'idempotency-key' }),
      });
      const eventId = uniqueEvent('key-only');
      const key = `stripe-charge:v1:acme:${eventId}`;
      const crashing = await stack.startWorker({
        env: keyOnlyEnv,
        crashAt: 'after-commit:stripe-charge',
        name: 'crash-key-only',
      });
      const claimed = keyOnly.claimAction({ tenant: 'acme', eventId }, charge(eventId), { wait: true });
      assert.equal((await crashing.exited).signal, 'SIGKILL');
      const atKill = (await chargesWith(key)).succeeded;
      assert.equal(atKill.length, 1, 'at the kill');
      const recovery = await stack.startWorker({ env: keyOnlyEnv, name: 'recover-key-only' });
      try {
        const action = await claimed;
        assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
        const { succeeded } = await chargesWith(key);
        // The resend carried the same Idempotency-Key; Stripe would have answered it with the first charge.
        assert.equal(succeeded.length, 2, 'two charges at localstripe');
        assert.equal(
          action.providerRef,
          succeeded.find((id) => id !== atKill[0]),
        );
      } finally {
        await recovery.stop();
      }
    },
  );

  it('does not retry a declined card: the action fails as declined, with no charge', { skip }, async () => {
    const worker = await stack.startWorker({ env, name: 'steady-declined' });
    try {
      const eventId = uniqueEvent('declined');
      const key = `stripe-charge:v1:acme:${eventId}`;
      const action = await client.claimAction(
        { tenant: 'acme', eventId },
        charge(eventId, { paymentMethod: decliningCard }),
        { wait: true },
      );
      assert.equal(action.status, 'failed', JSON.stringify(action.audit));
      assert.equal(action.error?.code, 'BusinessRejected', JSON.stringify(action.error));
      assert.match(action.error?.message ?? '', /card_declined/);
      assert.equal(action.sends, 1, 'one request, no retry');
      // localstripe keeps the declined attempt as a failed charge: one request reached it, and no money moved.
      assert.deepEqual((await chargesWith(key)).succeeded, []);
      assert.equal((await chargesWith(key)).failed.length, 1);
    } finally {
      await worker.stop();
    }
  });

  it(
    'charges once when the connection is cut after localstripe charged: ambiguous, then found by lookup, never resent by the SDK',
    { skip },
    async () => {
      const proxy = await startReplyCuttingProxy(
        { host: new URL(server.url).hostname, port: Number(new URL(server.url).port) },
        (sent) => sent.includes('POST /v1/charges '),
      );
      const taskQueue = 'stripe-behind-cutting-proxy';
      const worker = await stack.startWorker({
        env: { ...env, [STRIPE_ENV.apiBase]: `http://127.0.0.1:${proxy.port}`, RETRYSAFE_TASK_QUEUE: taskQueue },
        name: 'behind-cutting-proxy',
      });
      const proxied = new RetrysafeClient(stack.client, { taskQueue, tools: stripeTools(settings) });
      try {
        const eventId = uniqueEvent('cut');
        const key = `stripe-charge:v1:acme:${eventId}`;
        const action = await proxied.claimAction({ tenant: 'acme', eventId }, charge(eventId), { wait: true });
        assert.equal(proxy.cut(), 1, 'the proxy cut one answer');
        assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
        // stripe-node resends once on a closed connection even with maxNetworkRetries 0; the tool's HTTP client
        // stops that, so this is the lookup's finding and not a second charge.
        assert.match(action.audit.at(-1)?.reason ?? '', /^provider lookup: /, JSON.stringify(action.audit));
        const { succeeded } = await chargesWith(key);
        assert.deepEqual(succeeded, [action.providerRef], 'one charge at localstripe');
      } finally {
        await worker.stop();
        proxy.close();
      }
    },
  );
});
