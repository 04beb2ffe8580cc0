import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOL_CONTRACTS,
  checkContractLimits,
  contractFor,
  redactedPreview,
  summarizeIntent,
} from '../../policies/tool-contracts';
import { OPERATIONS, parseIntent, type Intent, type Operation } from '../../policies/intents';
import { RetrysafeError } from '../../policies/errors';
import { formatActionKey } from '../../policies/action-key';

const charge = (amountCents: number, currency = 'usd') =>
  parseIntent({
    operation: 'charge',
    amountCents,
    currency,
    customerId: 'cus_1842',
    paymentMethod: 'pm_card_visa',
    merchantReference: 'A-1842',
  });
const refund = (amountCents: number) =>
  parseIntent({ operation: 'refund', chargeId: 'ch_1', amountCents, merchantReference: 'A-1842' });
const reserve = (quantity: number) => parseIntent({ operation: 'reserve', sku: 'SKU-1', quantity, orderId: 'A-1842' });
const email = (body = 'Thanks for renewing.') =>
  parseIntent({ operation: 'send-email', to: 'alice.smith@example.com', subject: 'Your receipt', body });

const EXAMPLES: Record<Operation, Intent> = {
  charge: charge(4990),
  refund: refund(4990),
  'send-email': email(),
  'create-ticket': parseIntent({
    operation: 'create-ticket',
    externalRef: 'T-9',
    title: 'Card declined',
    body: 'See run',
  }),
  reserve: reserve(2),
  release: parseIntent({ operation: 'release', reservationId: 'res_1' }),
  'create-shipment': parseIntent({
    operation: 'create-shipment',
    shipmentRef: 'S-1842',
    orderId: 'A-1842',
    address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
  }),
};

function assertCeiling(fn: () => unknown, field: string, limit: number, value: number): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, 'CeilingReached');
    assert.deepEqual(err.details, { field, limit, value });
    assert.match(err.message, new RegExp(field));
    return true;
  });
}

describe('tool contracts', () => {
  it('declare exactly one contract per operation, each naming its own operation', () => {
    assert.deepEqual(Object.keys(TOOL_CONTRACTS).sort(), [...OPERATIONS].sort());
    for (const op of OPERATIONS) {
      assert.equal(TOOL_CONTRACTS[op].operation, op);
      assert.equal(contractFor(op), TOOL_CONTRACTS[op]);
    }
  });

  it('give every operation a positive integer version that forms a valid action key', () => {
    for (const op of OPERATIONS) {
      const { version } = TOOL_CONTRACTS[op];
      assert.ok(Number.isInteger(version) && version >= 1, op);
      assert.equal(
        formatActionKey({ operation: op, version, tenant: 'acme', eventId: 'e1' }),
        `${op}:v${version}:acme:e1`,
      );
    }
  });

  it('declare no dedupe for email: a lost reply can never be resent', () => {
    assert.equal(contractFor('send-email').dedupe, 'none');
    assert.equal(contractFor('send-email').lookupReference, undefined);
  });

  it('dedupe charges by idempotency key and compensate them with a refund', () => {
    const c = contractFor('charge');
    assert.equal(c.dedupe, 'idempotency-key');
    assert.equal(c.compensation, 'refund');
    assert.equal(c.riskClass, 'money-movement');
  });

  it('dedupe tickets by lookup, with a read-after-write lag above zero', () => {
    const c = contractFor('create-ticket');
    assert.equal(c.dedupe, 'lookup');
    assert.ok(c.readAfterWriteLagMs > 0);
  });

  it('give every lookup contract a lag above zero and a lookup reference', () => {
    const lookups = OPERATIONS.filter((op) => TOOL_CONTRACTS[op].dedupe === 'lookup');
    assert.deepEqual(lookups.sort(), ['create-shipment', 'create-ticket']);
    for (const op of lookups) {
      assert.ok(TOOL_CONTRACTS[op].readAfterWriteLagMs > 0, op);
      assert.equal(typeof TOOL_CONTRACTS[op].lookupReference, 'function', op);
    }
  });

  it('look tickets and shipments up by their business reference, keyed operations by the action key', () => {
    const key = 'x:v1:acme:e1';
    const lookup = (op: Operation) =>
      (contractFor(op).lookupReference as (i: Intent, k: string) => string)(EXAMPLES[op], key);
    assert.equal(lookup('create-ticket'), 'T-9');
    assert.equal(lookup('create-shipment'), 'S-1842');
    assert.equal(lookup('charge'), key);
  });

  it('name only declared operations as compensations, and reserve is undone by release', () => {
    for (const op of OPERATIONS) {
      const { compensation } = TOOL_CONTRACTS[op];
      if (compensation !== undefined) assert.ok(OPERATIONS.includes(compensation), `${op} -> ${compensation}`);
    }
    assert.equal(contractFor('reserve').compensation, 'release');
  });

  it('describe every operation as a mutation with a non-negative lag', () => {
    for (const op of OPERATIONS) {
      assert.equal(TOOL_CONTRACTS[op].kind, 'mutation', op);
      assert.ok(TOOL_CONTRACTS[op].readAfterWriteLagMs >= 0, op);
    }
  });

  it('contractFor refuses an unknown operation with UnknownOperation', () => {
    for (const op of ['wire-transfer', '', 'constructor', 'toString', '__proto__']) {
      assert.throws(
        () => contractFor(op as Operation),
        (err: unknown) => {
          assert.ok(err instanceof RetrysafeError, `${op}: expected a RetrysafeError`);
          assert.equal(err.code, 'UnknownOperation');
          assert.equal(err.details.field, 'operation');
          return true;
        },
      );
    }
  });
});

describe('checkContractLimits', () => {
  const maxCharge = contractFor('charge').limits.maxAmountCents!;

  it('declares a charge ceiling', () => {
    assert.equal(maxCharge, 1_000_000);
  });

  it('passes a charge below the ceiling and at it', () => {
    assert.doesNotThrow(() => checkContractLimits(charge(4990)));
    assert.doesNotThrow(() => checkContractLimits(charge(maxCharge)));
  });

  it('stops a charge above maxAmountCents with CeilingReached naming amountCents', () => {
    assertCeiling(() => checkContractLimits(charge(maxCharge + 1)), 'amountCents', maxCharge, maxCharge + 1);
  });

  it('stops a refund above its ceiling too', () => {
    const max = contractFor('refund').limits.maxAmountCents!;
    assert.doesNotThrow(() => checkContractLimits(refund(max)));
    assertCeiling(() => checkContractLimits(refund(max + 1)), 'amountCents', max, max + 1);
  });

  it('stops a reservation above maxQuantity, naming quantity', () => {
    const max = contractFor('reserve').limits.maxQuantity!;
    assert.equal(max, 100);
    assert.doesNotThrow(() => checkContractLimits(reserve(max)));
    assertCeiling(() => checkContractLimits(reserve(max + 1)), 'quantity', max, max + 1);
  });

  it('passes every example intent', () => {
    for (const op of OPERATIONS) assert.doesNotThrow(() => checkContractLimits(EXAMPLES[op]), op);
  });

  it('is not retryable: the action waits for a human', () => {
    try {
      checkContractLimits(charge(maxCharge + 1));
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.equal(err.toFailure().nonRetryable, true);
    }
  });
});

describe('redactedPreview', () => {
  it('masks the recipient of an email', () => {
    assert.equal(redactedPreview(email()).to, 'a***@example.com');
  });

  it('masks email addresses in free text, also on later lines', () => {
    const preview = redactedPreview(email('Hello,\nplease reply to bob.jones@example.com\nThanks'));
    assert.ok(!String(preview.body).includes('bob.jones'), String(preview.body));
    assert.ok(!JSON.stringify(preview).includes('alice.smith'));
  });

  it('keeps fields without email addresses as they are', () => {
    assert.deepEqual(redactedPreview(EXAMPLES.charge), EXAMPLES.charge);
    assert.deepEqual(redactedPreview(EXAMPLES['create-shipment']), EXAMPLES['create-shipment']);
    const preview = redactedPreview(email());
    assert.equal(preview.subject, 'Your receipt');
    assert.equal(preview.body, 'Thanks for renewing.');
  });

  it('does not modify the intent', () => {
    const intent = email();
    const copy = structuredClone(intent);
    redactedPreview(intent);
    assert.deepEqual(intent, copy);
  });

  it('drops the contract’s secret fields', (t) => {
    const contract = TOOL_CONTRACTS.charge as { secretFields: readonly string[] };
    const original = contract.secretFields;
    t.after(() => {
      contract.secretFields = original;
    });
    contract.secretFields = ['paymentMethod'];
    const preview = redactedPreview(EXAMPLES.charge);
    assert.equal(Object.prototype.hasOwnProperty.call(preview, 'paymentMethod'), false);
    assert.equal(preview.customerId, 'cus_1842');
  });
});

describe('summarizeIntent', () => {
  it('writes a charge as one line with the amount in currency units', () => {
    assert.equal(summarizeIntent(charge(4990)), 'charge 49.90 USD to cus_1842 for A-1842');
  });

  it('writes amounts with two decimals in the intent’s currency', () => {
    assert.match(summarizeIntent(charge(5, 'eur')), /^charge 0\.05 EUR /);
    assert.match(summarizeIntent(charge(100_000)), /^charge 1000\.00 USD /);
  });

  it('masks the recipient of an email', () => {
    const line = summarizeIntent(email());
    assert.equal(line, 'email "Your receipt" to a***@example.com');
  });

  it('names the reference a provider knows the action by', () => {
    assert.match(summarizeIntent(EXAMPLES['create-ticket']), /T-9/);
    assert.match(summarizeIntent(EXAMPLES['create-ticket']), /\(normal\)/);
    assert.match(summarizeIntent(EXAMPLES['create-shipment']), /S-1842/);
    assert.match(summarizeIntent(EXAMPLES.refund), /ch_1/);
    assert.match(summarizeIntent(EXAMPLES.release), /res_1/);
    assert.match(summarizeIntent(EXAMPLES.reserve), /SKU-1/);
  });

  it('gives every operation a non-empty single line', () => {
    for (const op of OPERATIONS) {
      const line = summarizeIntent(EXAMPLES[op]);
      assert.ok(line.length > 0 && !line.includes('\n'), `${op}: ${JSON.stringify(line)}`);
    }
  });
});
