import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startSandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { Charge, listOf, Refund } from '../../examples/sandbox-providers/resources';
import type { ChargeRequest } from '../../examples/sandbox-providers/resources';
import { errorOf, eventually, get, post, startWebhookReceiver } from './provider-http';

function chargeBody(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    amountCents: 1250,
    currency: 'usd',
    customerId: 'cus_1',
    paymentMethod: 'pm_card_visa',
    merchantReference: `order-${randomUUID()}`,
    ...overrides,
  };
}

describe('payments provider', () => {
  let payments: SandboxProvider;

  before(async () => {
    payments = await startSandboxProvider('payments');
  });
  after(async () => {
    await payments.stop();
  });
  afterEach(async () => {
    await payments.configure({ readLagMs: 0, webhookUrl: null, webhookDelayMs: 0 });
    await payments.reset();
  });

  it('replays the same charge for a repeated key and parameters, charging once', async () => {
    const body = chargeBody();
    const first = await post(payments.url, '/v1/charges', body, { key: 'key-replay' });
    // Same parameters in another key order: still the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await post(payments.url, '/v1/charges', reordered, { key: 'key-replay' });

    assert.equal(first.status, 201);
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(Charge.parse(second.body), Charge.parse(first.body));
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.deepEqual(ledger.counts['charges.create'], {
      committed: 1,
      replayed: 1,
      rejected: 0,
      conflict: 0,
      invalid: 0,
      faulted: 0,
    });
  });

  it('refuses a reused key with other parameters with 409 and charges nothing more', async () => {
    await post(payments.url, '/v1/charges', chargeBody({ merchantReference: 'order-a' }), { key: 'key-reused' });
    const reused = await post(
      payments.url,
      '/v1/charges',
      chargeBody({ merchantReference: 'order-a', amountCents: 999 }),
      {
        key: 'key-reused',
      },
    );

    assert.equal(reused.status, 409);
    assert.equal(errorOf(reused).code, 'idempotency_key_reused');
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.equal(ledger.counts['charges.create'].conflict, 1);
  });

  it('commits a charge whose reply is dropped; a retry with the same key gets it back, no second charge', async () => {
    const body = chargeBody();
    await payments.setFaults([{ op: 'charges.create', kind: 'drop-after-commit' }]);

    await assert.rejects(post(payments.url, '/v1/charges', body, { key: 'key-dropped' }), TypeError);
    const afterDrop = await payments.ledger();
    assert.equal(afterDrop.records.charges.length, 1, 'the effect happened although the caller saw an error');
    assert.deepEqual(afterDrop.requests[0].faults, ['drop-after-commit']);

    const retry = await post(payments.url, '/v1/charges', body, { key: 'key-dropped' });
    assert.equal(retry.status, 200);
    assert.equal(Charge.parse(retry.body).id, afterDrop.records.charges[0].id);
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.equal(ledger.counts['charges.create'].committed, 1);
    assert.equal(ledger.counts['charges.create'].replayed, 1);
  });

  it('hides a new charge from lookups during the read lag but not from GET by id', async () => {
    await payments.configure({ readLagMs: 400 });
    const body = chargeBody();
    const created = Charge.parse((await post(payments.url, '/v1/charges', body, { key: 'key-lagged' })).body);
    const Charges = listOf(Charge);

    const byKey = await get(payments.url, '/v1/charges?idempotencyKey=key-lagged');
    const byRef = await get(payments.url, `/v1/charges?merchantReference=${body.merchantReference}`);
    const all = await get(payments.url, '/v1/charges');
    assert.deepEqual(Charges.parse(byKey.body).data, []);
    assert.deepEqual(Charges.parse(byRef.body).data, []);
    assert.deepEqual(Charges.parse(all.body).data, []);
    assert.equal(Charge.parse((await get(payments.url, `/v1/charges/${created.id}`)).body).id, created.id);

    const found = await eventually(async () => {
      const { data } = Charges.parse((await get(payments.url, '/v1/charges?idempotencyKey=key-lagged')).body);
      return data.length > 0 ? data : undefined;
    });
    assert.ok(Date.now() - Date.parse(created.committedAt) >= 400);
    assert.deepEqual(found, [created]);
  });

  it('refunds under a key, refuses unknown charges and refunds above the charge, without committing them', async () => {
    const charge = Charge.parse((await post(payments.url, '/v1/charges', chargeBody(), { key: 'key-charge' })).body);
    const refund = { chargeId: charge.id, amountCents: 1000, merchantReference: 'refund-1' };

    const first = await post(payments.url, '/v1/refunds', refund, { key: 'key-refund' });
    const replay = await post(payments.url, '/v1/refunds', refund, { key: 'key-refund' });
    const tooMuch = await post(payments.url, '/v1/refunds', { ...refund, amountCents: 251 }, { key: 'key-refund-2' });
    const unknown = await post(payments.url, '/v1/refunds', { ...refund, chargeId: 'ch_404' }, { key: 'key-refund-3' });

    assert.equal(first.status, 201);
    assert.equal(Refund.parse(replay.body).id, Refund.parse(first.body).id);
    assert.equal(tooMuch.status, 422);
    assert.equal(errorOf(tooMuch).code, 'refund_exceeds_charge');
    assert.equal(unknown.status, 404);
    assert.equal(errorOf(unknown).code, 'charge_not_found');
    const ledger = await payments.ledger();
    assert.equal(ledger.records.refunds.length, 1);
    assert.equal(ledger.counts['refunds.create'].rejected, 2);
    const byKey = listOf(Refund).parse((await get(payments.url, '/v1/refunds?idempotencyKey=key-refund')).body);
    assert.equal(byKey.data.length, 1);
  });

  it('names the missing or bad field in a 400 and records the request as invalid', async () => {
    const noKey = await post(payments.url, '/v1/charges', chargeBody());
    const badAmount = await post(payments.url, '/v1/charges', chargeBody({ amountCents: 0 }), { key: 'k-bad-1' });
    const badCurrency = await post(payments.url, '/v1/charges', chargeBody({ currency: 'USD' }), { key: 'k-bad-2' });
    const notJson = await post(payments.url, '/v1/charges', '{"amountCents":', { key: 'k-bad-3' });

    assert.deepEqual(
      [noKey, badAmount, badCurrency, notJson].map((r) => [r.status, errorOf(r).code, errorOf(r).field]),
      [
        [400, 'invalid_request', 'Idempotency-Key'],
        [400, 'invalid_request', 'amountCents'],
        [400, 'invalid_request', 'currency'],
        [400, 'invalid_request', 'body'],
      ],
    );
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 0);
    assert.equal(ledger.counts['charges.create'].invalid, 4);
  });

  it('delivers a charge.succeeded webhook with the key after the response, retrying a failing receiver', async () => {
    const receiver = await startWebhookReceiver(2);
    try {
      await payments.configure({ webhookUrl: receiver.url, webhookDelayMs: 150 });
      const body = chargeBody();
      const created = await post(payments.url, '/v1/charges', body, { key: 'key-webhook' });
      assert.equal(receiver.events.length, 0, 'the response does not wait for the webhook');

      const [event] = await eventually(async () => (receiver.events.length ? receiver.events : undefined));
      assert.equal(event.type, 'charge.succeeded');
      assert.equal(event.idempotencyKey, 'key-webhook');
      assert.equal(event.reference, body.merchantReference);
      assert.deepEqual(event.data, created.body);

      const ledger = await payments.ledger();
      assert.equal(ledger.webhooks.length, 1);
      assert.equal(ledger.webhooks[0].attempts, 3);
      assert.equal(ledger.webhooks[0].delivered, true);
      // A replay is not a new commit, so it sends no new event.
      await post(payments.url, '/v1/charges', body, { key: 'key-webhook' });
      assert.equal((await payments.ledger()).webhooks.length, 1);
    } finally {
      await receiver.close();
    }
  });
});
