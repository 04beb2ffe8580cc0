import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSandboxProviders } from '../../examples/sandbox-providers/spawn';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { Charge } from '../../examples/sandbox-providers/resources';
import { errorOf, post, sleep } from './provider-http';

const charge = (merchantReference: string) => ({
  amountCents: 500,
  currency: 'eur',
  customerId: 'cus_9',
  paymentMethod: 'pm_card',
  merchantReference,
});
const shipment = (shipmentRef: string) => ({
  shipmentRef,
  orderId: 'order-7',
  address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
});

describe('fault injection', () => {
  let payments: SandboxProvider;
  let shipping: SandboxProvider;
  let stopAll: () => Promise<void>;

  before(async () => {
    ({ payments, shipping, stopAll } = await startSandboxProviders(['payments', 'shipping']));
  });
  after(async () => {
    await stopAll();
  });
  afterEach(async () => {
    await Promise.all([payments.reset(), shipping.reset()]);
  });

  it('answers 5xx, 429 and resets without committing; the same key then commits exactly once', async () => {
    await payments.setFaults([
      { op: 'charges.create', kind: 'status-5xx', status: 502 },
      { op: 'charges.create', kind: 'status-5xx' },
      { op: 'charges.create', kind: 'status-429' },
      { op: 'charges.create', kind: 'reset' },
    ]);
    const body = charge('order-flaky');
    const bad = await post(payments.url, '/v1/charges', body, { key: 'key-flaky' });
    const unavailable = await post(payments.url, '/v1/charges', body, { key: 'key-flaky' });
    const limited = await post(payments.url, '/v1/charges', body, { key: 'key-flaky' });
    await assert.rejects(post(payments.url, '/v1/charges', body, { key: 'key-flaky' }), TypeError);

    assert.equal(bad.status, 502);
    assert.equal(unavailable.status, 503);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal((await payments.ledger()).records.charges.length, 0);

    const success = await post(payments.url, '/v1/charges', body, { key: 'key-flaky' });
    assert.equal(success.status, 201);
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.deepEqual(
      ledger.requests.map((r) => r.outcome),
      ['fault:status-5xx', 'fault:status-5xx', 'fault:status-429', 'fault:reset', 'committed'],
    );
    assert.equal(ledger.counts['charges.create'].faulted, 4);
  });

  it('declines a charge with 402 card_declined and commits nothing', async () => {
    await payments.setFaults([{ op: 'charges.create', kind: 'decline', times: 2 }]);
    const first = await post(payments.url, '/v1/charges', charge('order-declined'), { key: 'key-declined-1' });
    const second = await post(payments.url, '/v1/charges', charge('order-declined'), { key: 'key-declined-2' });
    const third = await post(payments.url, '/v1/charges', charge('order-declined'), { key: 'key-declined-3' });

    assert.deepEqual([first.status, errorOf(first).code, second.status], [402, 'card_declined', 402]);
    assert.equal(third.status, 201, 'times: 2 strikes two requests only');
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.equal(ledger.counts['charges.create'].faulted, 2);
  });

  it('fails every shipment permanently with address_undeliverable until the fault is cleared', async () => {
    await shipping.setFaults([{ op: 'shipments.create', kind: 'permanent-failure', times: 1 }]);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post(shipping.url, '/v1/shipments', shipment(`ship-perm-${i}`)));

    assert.deepEqual(
      answers.map((a) => [a.status, errorOf(a).code]),
      Array(3).fill([422, 'address_undeliverable']),
    );
    assert.equal((await shipping.ledger()).records.shipments.length, 0);

    await shipping.clearFaults();
    assert.equal((await post(shipping.url, '/v1/shipments', shipment('ship-perm-0'))).status, 201);
    const ledger = await shipping.ledger();
    assert.equal(ledger.records.shipments.length, 1);
    assert.equal(ledger.counts['shipments.create'].faulted, 3);
  });

  it("matches '*' against every operation of the provider", async () => {
    await payments.setFaults([{ op: '*', kind: 'status-5xx', times: 2 }]);
    const charged = await post(payments.url, '/v1/charges', charge('order-star'), { key: 'key-star' });
    const refunded = await post(
      payments.url,
      '/v1/refunds',
      { chargeId: 'ch_1', amountCents: 1, merchantReference: 'r' },
      { key: 'key-star-refund' },
    );
    assert.deepEqual([charged.status, refunded.status], [503, 503]);
    const { counts } = await payments.ledger();
    assert.equal(counts['charges.create'].faulted + counts['refunds.create'].faulted, 2);
  });

  it('counts a held reply as committed but unanswered, then answers it', async () => {
    await payments.setFaults([{ op: 'charges.create', kind: 'hold-after-commit', delayMs: 800 }]);
    const pending = post(payments.url, '/v1/charges', charge('order-held'), { key: 'key-held' });

    await payments.waitForInflight((s) => s.committedButUnanswered === 1);
    const during = await payments.ledger();
    assert.equal(during.inflight, 1);
    assert.equal(during.records.charges.length, 1, 'committed before the caller hears anything');

    const answered = await pending;
    assert.equal(answered.status, 201);
    assert.equal(Charge.parse(answered.body).id, during.records.charges[0].id);
    await payments.waitForInflight((s) => s.inflight === 0 && s.committedButUnanswered === 0);
  });

  it('keeps the effect of a caller that vanished while its reply was held', async () => {
    await payments.setFaults([{ op: 'charges.create', kind: 'hold-after-commit', delayMs: 300 }]);
    const caller = new AbortController();
    const pending = post(payments.url, '/v1/charges', charge('order-vanished'), {
      key: 'key-vanished',
      signal: caller.signal,
    });
    await payments.waitForInflight((s) => s.committedButUnanswered === 1);
    caller.abort();
    await assert.rejects(pending, { name: 'AbortError' });

    await payments.waitForInflight((s) => s.inflight === 0);
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.deepEqual(ledger.requests[0].faults, ['hold-after-commit']);
  });

  it('counts a delayed request as in flight but not committed until the delay ends', async () => {
    await payments.setFaults([{ op: 'charges.create', kind: 'delay', delayMs: 400 }]);
    const pending = post(payments.url, '/v1/charges', charge('order-delayed'), { key: 'key-delayed' });

    await payments.waitForInflight((s) => s.inflight === 1);
    // A fixed look into the 400 ms delay on purpose: this checks that nothing commits while the delay runs, and no
    // event marks a moment inside it other than its start, which waitForInflight just saw.
    const INTO_THE_DELAY_MS = 50;
    await sleep(INTO_THE_DELAY_MS);
    const during = await payments.ledger();
    assert.equal(during.records.charges.length, 0);
    assert.equal(during.committedButUnanswered, 0);

    assert.equal((await pending).status, 201);
    const ledger = await payments.ledger();
    assert.equal(ledger.records.charges.length, 1);
    assert.deepEqual(ledger.requests[0].faults, ['delay']);
  });

  it('leaves faults unused by invalid requests, and refuses faults for unknown operations', async () => {
    await payments.setFaults([{ op: 'charges.create', kind: 'status-5xx' }]);
    const invalid = await post(payments.url, '/v1/charges', { amountCents: -1 }, { key: 'key-invalid' });
    const struck = await post(payments.url, '/v1/charges', charge('order-valid'), { key: 'key-valid' });
    assert.deepEqual([invalid.status, struck.status], [400, 503]);

    await assert.rejects(payments.setFaults([{ op: 'shipments.create', kind: 'reset' }]), /faults\.0\.op/);
  });
});
