import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exampleRegistry, type ExampleOperation } from '../../examples/tools';
import { RetrysafeError, type ErrorCode } from '../../policies/errors';
import { MAX_INTENT_BYTES, type Intent } from '../../policies/tool-registry';

/**
 * The example tools' input schemas (examples/tools/schemas.ts), as the registry applies them: parsing
 * normalizes, refusals name the field, and oversized intents are refused before anything else sees them.
 */
const tools = exampleRegistry();
const parseIntent = (raw: unknown) => tools.parseIntent(raw);
const requestHash = (intent: Intent) => tools.hash(intent);
const OPERATIONS = tools.names as readonly ExampleOperation[];
type Operation = ExampleOperation;
/** A nested object field of a parsed intent, for reading its members. */
const nested = (intent: Intent, field: string) => intent[field] as Record<string, unknown>;

function assertRefused(fn: () => unknown, code: ErrorCode, field: string): RetrysafeError {
  let caught: RetrysafeError | undefined;
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.details.field, field);
    caught = err;
    return true;
  });
  return caught!;
}

const CHARGE = {
  operation: 'charge',
  amountCents: 4990,
  currency: 'usd',
  customerId: 'cus_1842',
  paymentMethod: 'pm_card_visa',
  merchantReference: 'A-1842',
};

/** One valid raw example per operation, already in normal form, with what parseIntent must return. */
const VALID: Record<Operation, { raw: Record<string, unknown>; parsed: Intent }> = {
  charge: {
    raw: { ...CHARGE, description: 'Annual renewal' },
    parsed: { ...CHARGE, operation: 'charge', description: 'Annual renewal' },
  },
  refund: {
    raw: { operation: 'refund', chargeId: 'ch_1', amountCents: 4990, merchantReference: 'A-1842', reason: 'duplicate' },
    parsed: {
      operation: 'refund',
      chargeId: 'ch_1',
      amountCents: 4990,
      merchantReference: 'A-1842',
      reason: 'duplicate',
    },
  },
  'send-email': {
    raw: { operation: 'send-email', to: 'alice@example.com', subject: 'Your receipt', body: 'Thanks!' },
    parsed: { operation: 'send-email', to: 'alice@example.com', subject: 'Your receipt', body: 'Thanks!' },
  },
  'create-ticket': {
    raw: { operation: 'create-ticket', externalRef: 'T-9', title: 'Card declined', body: 'See run', priority: 'high' },
    parsed: {
      operation: 'create-ticket',
      externalRef: 'T-9',
      title: 'Card declined',
      body: 'See run',
      priority: 'high',
    },
  },
  reserve: {
    raw: { operation: 'reserve', sku: 'SKU-1', quantity: 2, orderId: 'A-1842' },
    parsed: { operation: 'reserve', sku: 'SKU-1', quantity: 2, orderId: 'A-1842' },
  },
  release: {
    raw: { operation: 'release', reservationId: 'res_1' },
    parsed: { operation: 'release', reservationId: 'res_1' },
  },
  'create-shipment': {
    raw: {
      operation: 'create-shipment',
      shipmentRef: 'S-1842',
      orderId: 'A-1842',
      address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
    },
    parsed: {
      operation: 'create-shipment',
      shipmentRef: 'S-1842',
      orderId: 'A-1842',
      address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
    },
  },
};

describe('parseIntent: valid intents', () => {
  it('has a valid example for each of the 7 example tools', () => {
    assert.deepEqual(Object.keys(VALID).sort(), [...OPERATIONS].sort());
    assert.deepEqual([...tools.names].sort(), [...OPERATIONS].sort());
    assert.equal(tools.names.length, 7);
  });

  for (const operation of OPERATIONS) {
    it(`parses a valid ${operation} intent`, () => {
      assert.deepEqual(parseIntent(VALID[operation].raw), VALID[operation].parsed);
    });
  }

  it('does not modify its input', () => {
    const raw = { ...CHARGE, currency: ' USD ' };
    const copy = structuredClone(raw);
    parseIntent(raw);
    assert.deepEqual(raw, copy);
  });

  it('has() accepts exactly the registered tools', () => {
    for (const op of OPERATIONS) assert.equal(tools.has(op), true);
    for (const other of ['Charge', 'wire', '', 'constructor', 'toString', '__proto__', undefined, 1])
      assert.equal(tools.has(other as string), false);
  });
});

describe('parseIntent: normalization', () => {
  it('lower-cases and trims email addresses', () => {
    const intent = parseIntent({ ...VALID['send-email'].raw, to: '  Alice.Smith@Example.COM ' });
    assert.equal(intent.to, 'alice.smith@example.com');
  });

  it('lower-cases and trims currencies', () => {
    const intent = parseIntent({ ...CHARGE, currency: ' USD ' });
    assert.equal(intent.currency, 'usd');
  });

  it('upper-cases and trims country codes', () => {
    const address = { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: ' de ' };
    const intent = parseIntent({ ...VALID['create-shipment'].raw, address });
    assert.equal(nested(intent, 'address').country, 'DE');
  });

  it('writes free text in NFC and trims it', () => {
    const intent = parseIntent({
      ...VALID['create-ticket'].raw,
      title: '  Cafe\u0301 order  ',
      body: '\n Caf\u00e9 \n',
    });
    assert.equal(intent.operation, 'create-ticket');
    assert.equal(intent.title, 'Caf\u00e9 order');
    assert.equal(intent.body, 'Caf\u00e9');
  });

  it('trims identifiers', () => {
    const intent = parseIntent({ ...CHARGE, customerId: ' cus_1842 ' });
    assert.equal(intent.customerId, 'cus_1842');
  });

  it("gives a ticket the default priority 'normal'", () => {
    const { priority: _priority, ...raw } = VALID['create-ticket'].raw;
    const intent = parseIntent(raw);
    assert.equal(intent.priority, 'normal');
  });

  it('leaves optional fields out when they are absent', () => {
    const intent = parseIntent(CHARGE);
    assert.equal(Object.prototype.hasOwnProperty.call(intent, 'description'), false);
  });

  it('hashes equivalent raw intents the same after parsing (whitespace, case, key order, NFD)', () => {
    const a = parseIntent({
      operation: 'create-shipment',
      shipmentRef: 'S-1842',
      orderId: 'A-1842',
      address: { line1: 'Caf\u00e9 Stra\u00dfe 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    });
    const b = parseIntent({
      address: { country: ' de', postalCode: '10115 ', city: '  Berlin', line1: 'Cafe\u0301 Stra\u00dfe 1 ' },
      orderId: ' A-1842',
      shipmentRef: 'S-1842 ',
      operation: 'create-shipment',
    });
    assert.equal(requestHash(a), requestHash(b));
  });

  it('hashes a charge the same whatever the case and spacing of its currency', () => {
    assert.equal(
      requestHash(parseIntent({ ...CHARGE, currency: 'usd' })),
      requestHash(parseIntent({ ...CHARGE, currency: ' USD ' })),
    );
  });

  it('hashes an email the same whatever the case and spacing of its recipient', () => {
    const raw = VALID['send-email'].raw;
    assert.equal(
      requestHash(parseIntent({ ...raw, to: 'alice@example.com' })),
      requestHash(parseIntent({ ...raw, to: ' ALICE@example.com ' })),
    );
  });

  it('hashes a ticket with the default priority the same as one that states it', () => {
    const { priority: _priority, ...raw } = VALID['create-ticket'].raw;
    assert.equal(requestHash(parseIntent(raw)), requestHash(parseIntent({ ...raw, priority: 'normal' })));
  });

  it('gives different hashes to intents that differ in amount', () => {
    assert.notEqual(requestHash(parseIntent(CHARGE)), requestHash(parseIntent({ ...CHARGE, amountCents: 4991 })));
  });
});

describe('parseIntent: refusals', () => {
  it('refuses an unknown operation with UnknownOperation naming operation and the registered tools', () => {
    const err = assertRefused(
      () => parseIntent({ ...CHARGE, operation: 'wire-transfer' }),
      'UnknownOperation',
      'operation',
    );
    assert.match(err.message, /"wire-transfer" is not a registered tool; registered: charge, refund, send-email/);
  });

  it('refuses a missing or non-string operation with UnknownOperation', () => {
    const { operation: _operation, ...rest } = CHARGE;
    assertRefused(() => parseIntent(rest), 'UnknownOperation', 'operation');
    assertRefused(() => parseIntent({ ...CHARGE, operation: 7 }), 'UnknownOperation', 'operation');
    assertRefused(() => parseIntent({ ...CHARGE, operation: 'Charge' }), 'UnknownOperation', 'operation');
    assertRefused(() => parseIntent({ ...CHARGE, operation: 'toString' }), 'UnknownOperation', 'operation');
  });

  it('refuses fractional cents, naming amountCents', () => {
    assertRefused(() => parseIntent({ ...CHARGE, amountCents: 49.9 }), 'InvalidIntent', 'amountCents');
  });

  it('refuses zero, negative, too-large and string amounts, naming amountCents', () => {
    for (const amountCents of [0, -1, 100_000_001, '4990', Number.NaN]) {
      assertRefused(() => parseIntent({ ...CHARGE, amountCents }), 'InvalidIntent', 'amountCents');
    }
  });

  it('names a missing required field', () => {
    const { customerId: _customerId, ...rest } = CHARGE;
    const err = assertRefused(() => parseIntent(rest), 'InvalidIntent', 'customerId');
    assert.equal(err.details.operation, 'charge');
    assert.match(err.message, /customerId/);
  });

  it('names a missing field of a nested object by its path', () => {
    const { address } = VALID['create-shipment'].raw as { address: Record<string, unknown> };
    const { city: _city, ...rest } = address;
    assertRefused(
      () => parseIntent({ ...VALID['create-shipment'].raw, address: rest }),
      'InvalidIntent',
      'address.city',
    );
  });

  it('refuses an extra top-level field, naming it', () => {
    const err = assertRefused(() => parseIntent({ ...CHARGE, discount: 100 }), 'InvalidIntent', 'discount');
    assert.match(err.message, /^charge: discount: unknown field$/);
    assert.equal(err.details.operation, 'charge');
  });

  it('refuses an extra field in every operation (strict objects)', () => {
    for (const operation of OPERATIONS) {
      assertRefused(() => parseIntent({ ...VALID[operation].raw, note: 'x' }), 'InvalidIntent', 'note');
    }
  });

  it('refuses an extra field inside a nested object, naming its path', () => {
    const raw = VALID['create-shipment'].raw as { address: Record<string, unknown> };
    const err = assertRefused(
      () => parseIntent({ ...raw, address: { ...raw.address, zip: '1' } }),
      'InvalidIntent',
      'address.zip',
    );
    assert.match(err.message, /address\.zip: unknown field/);
  });

  it('refuses a field of another operation', () => {
    assertRefused(() => parseIntent({ ...VALID.release.raw, amountCents: 1 }), 'InvalidIntent', 'amountCents');
  });

  it('refuses malformed emails, currencies, countries and identifiers, naming each', () => {
    assertRefused(() => parseIntent({ ...VALID['send-email'].raw, to: 'not-an-email' }), 'InvalidIntent', 'to');
    assertRefused(() => parseIntent({ ...CHARGE, currency: 'US' }), 'InvalidIntent', 'currency');
    assertRefused(() => parseIntent({ ...CHARGE, currency: 'us1' }), 'InvalidIntent', 'currency');
    assertRefused(() => parseIntent({ ...CHARGE, customerId: 'cus 1' }), 'InvalidIntent', 'customerId');
    assertRefused(() => parseIntent({ ...CHARGE, merchantReference: '' }), 'InvalidIntent', 'merchantReference');
    const raw = VALID['create-shipment'].raw as { address: Record<string, unknown> };
    assertRefused(
      () => parseIntent({ ...raw, address: { ...raw.address, country: 'DEU' } }),
      'InvalidIntent',
      'address.country',
    );
  });

  it('refuses text that is empty after trimming', () => {
    assertRefused(() => parseIntent({ ...VALID['send-email'].raw, subject: '   ' }), 'InvalidIntent', 'subject');
  });

  it('refuses an unknown ticket priority and a non-integer quantity', () => {
    assertRefused(
      () => parseIntent({ ...VALID['create-ticket'].raw, priority: 'urgent' }),
      'InvalidIntent',
      'priority',
    );
    assertRefused(() => parseIntent({ ...VALID.reserve.raw, quantity: 1.5 }), 'InvalidIntent', 'quantity');
  });

  it('refuses anything that is not a plain object with InvalidIntent', () => {
    for (const raw of [null, undefined, 'charge', 42, true, [], [CHARGE]]) {
      assertRefused(() => parseIntent(raw), 'InvalidIntent', '(root)');
    }
  });

  it('refuses an intent that cannot be serialized as JSON, naming the field', () => {
    assertRefused(() => parseIntent({ ...CHARGE, amountCents: 10n }), 'InvalidIntent', 'amountCents');
  });

  it(`refuses an intent larger than MAX_INTENT_BYTES (${MAX_INTENT_BYTES}) with PayloadTooLarge, naming the largest field`, () => {
    const raw = { ...VALID['send-email'].raw, body: 'x'.repeat(MAX_INTENT_BYTES) };
    const err = assertRefused(() => parseIntent(raw), 'PayloadTooLarge', 'body');
    assert.ok((err.details.size as number) > MAX_INTENT_BYTES);
    assert.match(err.message, /body is the largest part/);
  });

  it('refuses a 5 MB email body as PayloadTooLarge naming body, before the schema looks at it', () => {
    const raw = { ...VALID['send-email'].raw, body: 'x'.repeat(5 * 1024 * 1024) };
    const err = assertRefused(() => parseIntent(raw), 'PayloadTooLarge', 'body');
    assert.ok((err.details.size as number) > 5 * 1024 * 1024);
    assert.equal(err.retryable, false);
  });

  it('names a nested field by its path when it alone makes the intent too large', () => {
    const raw = VALID['create-shipment'].raw as { address: Record<string, unknown> };
    const huge = { ...raw, address: { ...raw.address, line1: 'x'.repeat(MAX_INTENT_BYTES) } };
    assertRefused(() => parseIntent(huge), 'PayloadTooLarge', 'address.line1');
  });

  it('names (root) when no one field is most of an oversized intent', () => {
    const half = 'x'.repeat(MAX_INTENT_BYTES / 2 - 20);
    const raw = { ...VALID['send-email'].raw, subject: half, body: half };
    assert.ok(Buffer.byteLength(JSON.stringify(raw), 'utf8') > MAX_INTENT_BYTES);
    assertRefused(() => parseIntent(raw), 'PayloadTooLarge', '(root)');
  });

  it('measures the payload in UTF-8 bytes, not characters', () => {
    // 17,000 two-byte characters: under the body's 20,000-character limit, over the 32 KiB byte limit.
    const twoByte = { ...VALID['send-email'].raw, body: '\u00e9'.repeat(17_000) };
    assertRefused(() => parseIntent(twoByte), 'PayloadTooLarge', 'body');
    // 8,300 four-byte characters (surrogate pairs): 16,600 UTF-16 units but 33,200 bytes.
    const fourByte = { ...VALID['send-email'].raw, body: '\u{1f600}'.repeat(8_300) };
    assertRefused(() => parseIntent(fourByte), 'PayloadTooLarge', 'body');
  });

  it('accepts an intent of exactly MAX_INTENT_BYTES and refuses one byte more', () => {
    const base = { ...VALID['send-email'].raw, body: '' };
    const baseBytes = Buffer.byteLength(JSON.stringify(base), 'utf8');
    const twoByte = '\u00e9'.repeat(16_000);
    const padding = MAX_INTENT_BYTES - baseBytes - Buffer.byteLength(twoByte, 'utf8');
    const atLimit = { ...base, body: twoByte + 'x'.repeat(padding) };
    assert.equal(Buffer.byteLength(JSON.stringify(atLimit), 'utf8'), MAX_INTENT_BYTES);
    assert.equal(parseIntent(atLimit).operation, 'send-email');
    assertRefused(() => parseIntent({ ...base, body: `${atLimit.body}x` }), 'PayloadTooLarge', 'body');
  });

  it('checks the operation before the size, so an unknown huge intent is UnknownOperation', () => {
    assertRefused(
      () => parseIntent({ operation: 'nope', body: 'x'.repeat(MAX_INTENT_BYTES) }),
      'UnknownOperation',
      'operation',
    );
  });

  it('lists every issue in details, not only the first', () => {
    const err = assertRefused(
      () => parseIntent({ operation: 'charge', amountCents: 1.5, currency: 'dollars' }),
      'InvalidIntent',
      'amountCents',
    );
    const fields = (err.details.issues as Array<{ field: string }>).map((i) => i.field);
    for (const f of ['amountCents', 'currency', 'customerId', 'paymentMethod', 'merchantReference']) {
      assert.ok(fields.includes(f), `issues should include ${f}: ${fields.join(', ')}`);
    }
  });

  it('refusals are non-retryable', () => {
    const err = assertRefused(() => parseIntent({ ...CHARGE, amountCents: 1.5 }), 'InvalidIntent', 'amountCents');
    assert.equal(err.retryable, false);
  });
});
