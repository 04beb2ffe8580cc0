import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { APPROVED_EMAIL_TEMPLATES, exampleRegistry, exampleTools, type ExampleOperation } from '../../examples/tools';
import { RetrysafeError } from '../../policies/errors';
import { formatActionKey } from '../../policies/action-key';
import { defineTool, type AnyTool } from '../../policies/tool';
import { checkToolLimits } from '../../policies/tool-facts';
import { createToolRegistry, type Intent } from '../../policies/tool-registry';
import { committed } from '../../policies/tool-outcome';

const tools = exampleRegistry();
const UNUSED = 'http://127.0.0.1:9';
const URLS = { payments: UNUSED, email: UNUSED, tickets: UNUSED, inventory: UNUSED, shipping: UNUSED };
const OPERATIONS = tools.names as readonly ExampleOperation[];
type Operation = ExampleOperation;

const charge = (amountCents: number, currency = 'usd') =>
  tools.parseIntent({
    operation: 'charge',
    amountCents,
    currency,
    customerId: 'cus_1842',
    paymentMethod: 'pm_card_visa',
    merchantReference: 'A-1842',
  });
const refund = (amountCents: number) =>
  tools.parseIntent({ operation: 'refund', chargeId: 'ch_1', amountCents, merchantReference: 'A-1842' });
const reserve = (quantity: number) =>
  tools.parseIntent({ operation: 'reserve', sku: 'SKU-1', quantity, orderId: 'A-1842' });
const email = (body = 'Thanks for renewing.', template?: string) =>
  tools.parseIntent({
    operation: 'send-email',
    to: 'alice.smith@example.com',
    subject: 'Your receipt',
    body,
    ...(template !== undefined ? { template } : {}),
  });

const EXAMPLES: Record<Operation, Intent> = {
  charge: charge(4990),
  refund: refund(4990),
  'send-email': email(),
  'create-ticket': tools.parseIntent({
    operation: 'create-ticket',
    externalRef: 'T-9',
    title: 'Card declined',
    body: 'See run',
  }),
  reserve: reserve(2),
  release: tools.parseIntent({ operation: 'release', reservationId: 'res_1' }),
  'create-shipment': tools.parseIntent({
    operation: 'create-shipment',
    shipmentRef: 'S-1842',
    orderId: 'A-1842',
    address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' },
  }),
};

/** The two payment tools with `change` applied to the charge tool. */
function paymentsWith(change: (tool: AnyTool) => AnyTool): AnyTool[] {
  const [chargeTool, refundTool] = exampleTools(URLS);
  return [change(chargeTool), refundTool];
}

/** A minimal valid user-defined tool, for testing what the registry refuses. */
function customTool(overrides: Partial<AnyTool> = {}): AnyTool {
  return {
    ...defineTool({
      name: 'archive-record',
      version: 1,
      description: 'Archive one record.',
      input: z.strictObject({ recordId: z.string().min(1) }),
      kind: 'mutation',
      dedupe: 'idempotency-key',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      summarize: (i) => `archive ${i.recordId}`,
      execute: async () => committed('ok'),
    }),
    ...overrides,
  };
}

function assertCeiling(fn: () => unknown, field: string, limit: number, value: number): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, 'CeilingReached');
    assert.deepEqual(err.details, { field, limit, value });
    assert.match(err.message, new RegExp(field));
    return true;
  });
}

function assertInvalidTool(fn: () => unknown, tool: string, field: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, 'InvalidTool');
    assert.deepEqual(err.details, { tool, field });
    assert.match(err.message, new RegExp(`tool ${tool}: ${field.replace(/\./g, '\\.')} `));
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('example tools', () => {
  it('register exactly one tool per operation, each under its own name', () => {
    // The one place the seven example operations are spelled out; everything else reads the registry.
    assert.deepEqual(tools.names, ['charge', 'refund', 'send-email', 'create-ticket', 'reserve', 'release', 'create-shipment']);
    for (const op of OPERATIONS) {
      assert.equal(tools.get(op).name, op);
      assert.equal(tools.describe(EXAMPLES[op]).name, op);
    }
  });

  it('give every tool a positive integer version that forms a valid action key', () => {
    for (const op of OPERATIONS) {
      const { version } = tools.get(op);
      assert.ok(Number.isInteger(version) && version >= 1, op);
      assert.equal(tools.describe(EXAMPLES[op]).version, version);
      assert.equal(
        formatActionKey({ operation: op, version, tenant: 'acme', eventId: 'e1' }),
        `${op}:v${version}:acme:e1`,
      );
    }
  });

  it('give every tool a description for the planner', () => {
    for (const op of OPERATIONS) assert.ok(tools.get(op).description.trim().length > 0, op);
  });

  it('declare no dedupe for email: a lost reply can never be resent', () => {
    const d = tools.describe(EXAMPLES['send-email']);
    assert.equal(d.dedupe, 'none');
    assert.equal(d.hasLookup, false);
    assert.equal(tools.get('send-email').lookup, undefined);
    assert.equal(tools.reference(EXAMPLES['send-email'], 'send-email:v1:acme:e1'), undefined);
  });

  it('dedupe charges by idempotency key and compensate them with a refund', () => {
    const d = tools.describe(EXAMPLES.charge);
    assert.equal(d.dedupe, 'idempotency-key');
    assert.equal(d.compensationTool, 'refund');
    assert.equal(d.riskClass, 'money-movement');
    assert.equal(d.amountField, 'amountCents');
    assert.equal(d.currencyField, 'currency');
    assert.equal(d.hasLookup, true);
    assert.ok((d.keyRetentionMs ?? 0) > 0, 'the payments provider forgets keys after a while');
  });

  it('dedupe tickets by lookup, with a read-after-write lag above zero', () => {
    const d = tools.describe(EXAMPLES['create-ticket']);
    assert.equal(d.dedupe, 'lookup');
    assert.ok(d.readAfterWriteLagMs > 0);
  });

  it('give every lookup tool a lag above zero, a lookup and a business reference', () => {
    const lookups = OPERATIONS.filter((op) => tools.get(op).dedupe === 'lookup');
    assert.deepEqual([...lookups].sort(), ['create-shipment', 'create-ticket']);
    for (const op of lookups) {
      const d = tools.describe(EXAMPLES[op]);
      assert.ok(d.readAfterWriteLagMs > 0, op);
      assert.equal(d.hasLookup, true, op);
      assert.equal(typeof tools.get(op).reference, 'function', op);
    }
  });

  it('look tickets and shipments up by their business reference; keyed tools have no reference but the key', () => {
    const key = 'x:v1:acme:e1';
    assert.equal(tools.reference(EXAMPLES['create-ticket'], key), 'T-9');
    assert.equal(tools.reference(EXAMPLES['create-shipment'], key), 'S-1842');
    assert.equal(tools.reference(EXAMPLES.charge, key), undefined);
    assert.equal(tools.reference(EXAMPLES.reserve, key), undefined);
  });

  it('name only registered tools as compensations, and reserve is undone by release', () => {
    for (const op of OPERATIONS) {
      const compensation = tools.describe(EXAMPLES[op]).compensationTool;
      if (compensation !== undefined) assert.ok(tools.has(compensation), `${op} -> ${compensation}`);
    }
    assert.equal(tools.describe(EXAMPLES.reserve).compensationTool, 'release');
    assert.equal(tools.describe(EXAMPLES.refund).compensationTool, undefined);
  });

  it('derive the undo of a done action as a parsed intent of the compensating tool', () => {
    assert.deepEqual(tools.compensationFor(EXAMPLES.charge, { providerRef: 'ch_9' }), {
      operation: 'refund',
      chargeId: 'ch_9',
      amountCents: 4990,
      merchantReference: 'A-1842',
    });
    assert.deepEqual(tools.compensationFor(EXAMPLES.reserve, { providerRef: 'res_7' }), {
      operation: 'release',
      reservationId: 'res_7',
    });
    assert.equal(tools.compensationFor(EXAMPLES['send-email'], { providerRef: 'msg_1' }), undefined);
    assert.equal(tools.compensationFor(EXAMPLES.refund, { providerRef: 're_1' }), undefined);
  });

  it('describe every tool as a mutation with a non-negative lag', () => {
    for (const op of OPERATIONS) {
      const d = tools.describe(EXAMPLES[op]);
      assert.equal(d.kind, 'mutation', op);
      assert.ok(d.readAfterWriteLagMs >= 0, op);
    }
  });

  it('describe as plain data that survives a JSON round trip (it is recorded in history)', () => {
    for (const op of OPERATIONS) {
      const d = tools.describe(EXAMPLES[op]);
      assert.deepEqual(JSON.parse(JSON.stringify(d)), d, op);
    }
  });

  it('get refuses an unknown operation with UnknownOperation', () => {
    for (const op of ['wire-transfer', '', 'constructor', 'toString', '__proto__']) {
      assert.throws(
        () => tools.get(op),
        (err: unknown) => {
          assert.ok(err instanceof RetrysafeError, `${op}: expected a RetrysafeError`);
          assert.equal(err.code, 'UnknownOperation');
          assert.equal(err.details.field, 'operation');
          return true;
        },
      );
    }
    assert.throws(() => tools.describe({ operation: 'wire-transfer' }), /not a registered tool/);
  });
});

describe('risk classes', () => {
  it('puts money tools under money-movement and the rest under routine or customer messages', () => {
    const expected: Record<Operation, string> = {
      charge: 'money-movement',
      refund: 'money-movement',
      'send-email': 'customer-message',
      'create-ticket': 'routine-message',
      reserve: 'routine-message',
      release: 'routine-message',
      'create-shipment': 'routine-message',
    };
    for (const op of OPERATIONS) assert.equal(tools.describe(EXAMPLES[op]).riskClass, expected[op], op);
  });

  it('treats an email from an approved template as routine, and any other as customer contact', () => {
    for (const template of APPROVED_EMAIL_TEMPLATES) {
      assert.equal(tools.describe(email('Your order is on its way.', template)).riskClass, 'routine-message', template);
    }
    assert.equal(tools.describe(email('Buy more!', 'promo-blast')).riskClass, 'customer-message');
    assert.equal(tools.describe(email()).riskClass, 'customer-message');
    assert.equal(tools.get('send-email').riskClass, 'customer-message', 'the default class is the stricter one');
  });
});

describe('checkToolLimits', () => {
  const limit = (op: Operation, field: string) => tools.describe(EXAMPLES[op]).limits[field]?.max;
  const check = (intent: Intent) => checkToolLimits(tools.describe(intent), intent);
  const maxCharge = limit('charge', 'amountCents')!;

  it('declares a charge ceiling', () => {
    assert.equal(maxCharge, 1_000_000);
  });

  it('passes a charge below the ceiling and at it', () => {
    assert.doesNotThrow(() => check(charge(4990)));
    assert.doesNotThrow(() => check(charge(maxCharge)));
  });

  it('stops a charge above its amountCents limit with CeilingReached naming amountCents', () => {
    assertCeiling(() => check(charge(maxCharge + 1)), 'amountCents', maxCharge, maxCharge + 1);
  });

  it('stops a refund above its ceiling too', () => {
    const max = limit('refund', 'amountCents')!;
    assert.equal(max, 1_000_000);
    assert.doesNotThrow(() => check(refund(max)));
    assertCeiling(() => check(refund(max + 1)), 'amountCents', max, max + 1);
  });

  it('stops a reservation above its quantity limit, naming quantity', () => {
    const max = limit('reserve', 'quantity')!;
    assert.equal(max, 100);
    assert.doesNotThrow(() => check(reserve(max)));
    assertCeiling(() => check(reserve(max + 1)), 'quantity', max, max + 1);
  });

  it('passes every example intent', () => {
    for (const op of OPERATIONS) assert.doesNotThrow(() => check(EXAMPLES[op]), op);
  });

  it('is not retryable: the action waits for a human', () => {
    try {
      check(charge(maxCharge + 1));
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.equal(err.toFailure().nonRetryable, true);
    }
  });
});

describe('preview', () => {
  it('masks the recipient of an email', () => {
    assert.equal(tools.preview(email()).to, 'a***@example.com');
  });

  it('masks email addresses in free text, also on later lines', () => {
    const preview = tools.preview(email('Hello,\nplease reply to bob.jones@example.com\nThanks'));
    assert.ok(!String(preview.body).includes('bob.jones'), String(preview.body));
    assert.ok(!JSON.stringify(preview).includes('alice.smith'));
  });

  it('keeps fields without email addresses as they are', () => {
    assert.deepEqual(tools.preview(EXAMPLES.charge), EXAMPLES.charge);
    assert.deepEqual(tools.preview(EXAMPLES['create-shipment']), EXAMPLES['create-shipment']);
    const preview = tools.preview(email());
    assert.equal(preview.subject, 'Your receipt');
    assert.equal(preview.body, 'Thanks for renewing.');
  });

  it('does not modify the intent', () => {
    const intent = email();
    const copy = structuredClone(intent);
    tools.preview(intent);
    assert.deepEqual(intent, copy);
  });

  it("drops the tool's secret fields, which also stay out of the request hash", () => {
    const secret = createToolRegistry(paymentsWith((t) => ({ ...t, secretFields: ['paymentMethod'] })));
    const intent = secret.parseIntent(EXAMPLES.charge);
    const preview = secret.preview(intent);
    assert.equal(Object.prototype.hasOwnProperty.call(preview, 'paymentMethod'), false);
    assert.equal(preview.customerId, 'cus_1842');
    const otherCard = secret.parseIntent({ ...EXAMPLES.charge, paymentMethod: 'pm_card_amex' });
    assert.equal(secret.hash(otherCard), secret.hash(intent), 'a secret field does not enter the hash');
    assert.notEqual(tools.hash(otherCard), tools.hash(intent), 'without secretFields it does');
  });

  it('keeps secret fields out of the summary and the dry run, which are computed without them', () => {
    const secret = createToolRegistry(paymentsWith((t) => ({ ...t, secretFields: ['paymentMethod'] })));
    const intent = secret.parseIntent({ ...EXAMPLES.charge, paymentMethod: 'pm_SECRET' });
    assert.doesNotMatch(JSON.stringify(secret.dryRun(intent)), /pm_SECRET/);
    assert.doesNotMatch(secret.summarize(intent), /pm_SECRET/);
    assert.match(
      JSON.stringify(tools.dryRun(tools.parseIntent({ ...EXAMPLES.charge, paymentMethod: 'pm_SECRET' }))),
      /pm_SECRET/,
      'without secretFields it shows',
    );
  });
});

describe('dry run descriptions', () => {
  it("describe each example's target and reach", () => {
    assert.deepEqual(tools.dryRun(EXAMPLES.charge), {
      target: 'customer cus_1842 (payment method pm_card_visa)',
      scope: 'one charge of 4990 USD minor units',
    });
    assert.deepEqual(tools.dryRun(EXAMPLES.reserve), {
      target: 'SKU SKU-1 for order A-1842',
      scope: '2 unit(s) held',
    });
  });

  it('mask the recipient of an email and say it cannot be unsent', () => {
    const d = tools.dryRun(EXAMPLES['send-email']);
    assert.equal(d.target, 'recipient a***@example.com');
    assert.match(d.scope, /cannot be unsent/);
  });

  it('fall back to the tool name and the summary for a tool without its own', () => {
    const registry = createToolRegistry([customTool()]);
    const intent = registry.parseIntent({ operation: 'archive-record', recordId: 'r-1' });
    assert.deepEqual(registry.dryRun(intent), {
      target: 'archive-record',
      scope: 'archive r-1',
    });
  });
});

describe('summarize', () => {
  it('writes a charge as one line with the amount in currency units', () => {
    assert.equal(tools.summarize(charge(4990)), 'charge 49.90 USD to cus_1842 for A-1842');
  });

  it('writes amounts with two decimals in the intent’s currency', () => {
    assert.match(tools.summarize(charge(5, 'eur')), /^charge 0\.05 EUR /);
    assert.match(tools.summarize(charge(100_000)), /^charge 1000\.00 USD /);
  });

  it('masks the recipient of an email', () => {
    const line = tools.summarize(email());
    assert.equal(line, 'email "Your receipt" to a***@example.com');
  });

  it('names the reference a provider knows the action by', () => {
    assert.match(tools.summarize(EXAMPLES['create-ticket']), /T-9/);
    assert.match(tools.summarize(EXAMPLES['create-ticket']), /\(normal\)/);
    assert.match(tools.summarize(EXAMPLES['create-shipment']), /S-1842/);
    assert.match(tools.summarize(EXAMPLES.refund), /ch_1/);
    assert.match(tools.summarize(EXAMPLES.release), /res_1/);
    assert.match(tools.summarize(EXAMPLES.reserve), /SKU-1/);
  });

  it('gives every operation a non-empty single line', () => {
    for (const op of OPERATIONS) {
      const line = tools.summarize(EXAMPLES[op]);
      assert.ok(line.length > 0 && !line.includes('\n'), `${op}: ${JSON.stringify(line)}`);
    }
  });
});

describe('createToolRegistry', () => {
  it('accepts a user-defined tool and derives its descriptor', () => {
    const registry = createToolRegistry([customTool({ limits: { priority: { max: 3 } } })]);
    assert.deepEqual(registry.names, ['archive-record']);
    const intent = registry.parseIntent({ operation: 'archive-record', recordId: ' r-1 ' });
    assert.deepEqual(registry.describe(intent), {
      name: 'archive-record',
      version: 1,
      kind: 'mutation',
      dedupe: 'idempotency-key',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      hasLookup: false,
      limits: { priority: { max: 3 } },
    });
  });

  it('accepts a transactional tool', () => {
    const registry = createToolRegistry([customTool({ dedupe: 'transactional' })]);
    assert.equal(registry.describe({ operation: 'archive-record', recordId: 'r-1' }).dedupe, 'transactional');
  });

  it('refuses a tool name registered twice', () => {
    const [chargeTool, refundTool] = exampleTools(URLS);
    assertInvalidTool(
      () => createToolRegistry([chargeTool, refundTool, chargeTool]),
      'charge',
      'name',
      /registered twice/,
    );
    assertInvalidTool(() => createToolRegistry([customTool(), customTool({ version: 2 })]), 'archive-record', 'name');
  });

  it('refuses a lookup-dedupe tool without a lookup', () => {
    const [ticketTool] = exampleTools(URLS).filter((t) => t.name === 'create-ticket');
    const { lookup: _lookup, ...withoutLookup } = ticketTool;
    assertInvalidTool(
      () => createToolRegistry([withoutLookup as AnyTool]),
      'create-ticket',
      'lookup',
      /required when dedupe is lookup/,
    );
    assertInvalidTool(() => createToolRegistry([customTool({ dedupe: 'lookup' })]), 'archive-record', 'lookup');
  });

  it('refuses a compensation naming a tool that is not registered', () => {
    const [chargeTool] = exampleTools(URLS);
    assertInvalidTool(
      () => createToolRegistry([chargeTool]),
      'charge',
      'compensation.tool',
      /"refund", which is not registered/,
    );
    const undo = { tool: 'unarchive-record', input: () => ({}) };
    assertInvalidTool(
      () => createToolRegistry([customTool({ compensation: undo })]),
      'archive-record',
      'compensation.tool',
    );
  });

  it('refuses a money-movement tool without an amount field', () => {
    assertInvalidTool(
      () => createToolRegistry(paymentsWith((t) => ({ ...t, amountField: undefined }))),
      'charge',
      'amountField',
      /required for money-movement/,
    );
    assertInvalidTool(
      () => createToolRegistry([customTool({ riskClass: 'money-movement' })]),
      'archive-record',
      'amountField',
    );
  });

  it('refuses other malformed fields, naming each', () => {
    assertInvalidTool(() => createToolRegistry([customTool({ name: 'Archive_Record' })]), 'Archive_Record', 'name');
    assertInvalidTool(() => createToolRegistry([customTool({ version: 0 })]), 'archive-record', 'version');
    assertInvalidTool(
      () => createToolRegistry([customTool({ dedupe: 'maybe' as 'none' })]),
      'archive-record',
      'dedupe',
    );
    assertInvalidTool(
      () => createToolRegistry([customTool({ riskClass: 'lunch' as 'read' })]),
      'archive-record',
      'riskClass',
    );
    assertInvalidTool(
      () => createToolRegistry([customTool({ readAfterWriteLagMs: -1 })]),
      'archive-record',
      'readAfterWriteLagMs',
    );
    assertInvalidTool(
      () => createToolRegistry([customTool({ limits: { quantity: { max: Number.NaN } } })]),
      'archive-record',
      'limits.quantity.max',
    );
  });

  it('refuses with a non-retryable error, so a worker with a bad tool does not start', () => {
    try {
      createToolRegistry([customTool({ riskClass: 'money-movement' })]);
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.equal(err.retryable, false);
    }
  });
});
