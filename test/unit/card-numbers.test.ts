import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { createPrepareAction } from '../../activities/prepare-action';
import { exampleRegistry } from '../../examples/tools';
import {
  containsCardNumber,
  findCardNumberField,
  findCardNumbers,
  luhnValid,
  maskCardNumbers,
  maskCardNumbersIn,
} from '../../policies/card-numbers';
import { RetrysafeError } from '../../policies/errors';
import { canonicalJson } from '../../policies/request-hash';
import { cardNumberModeFor, parseTenantPolicyConfig, policyForTenant } from '../../policies/tenant-policy';
import { defineTool } from '../../policies/tool';
import { committed } from '../../policies/tool-outcome';
import { createToolRegistry } from '../../policies/tool-registry';

const tools = exampleRegistry();
const VISA = '4242 4242 4242 4242';

/** No run of four or more digits: what a refusal or a masked text may show of a card number is its last four. */
const noLongDigitRun = (text: string) => !/\d{5,}|\d{4}[ -]\d{4}/.test(text);

const chargeWith = (description: string) => ({
  operation: 'charge',
  amountCents: 4990,
  currency: 'usd',
  customerId: 'cus_1842',
  paymentMethod: 'pm_card_visa',
  merchantReference: 'A-1842',
  description,
});
const emailWith = (body: string) => ({
  operation: 'send-email',
  to: 'alice@example.com',
  subject: 'Your renewal',
  body,
  template: 'dispatch-notice',
});
const shipmentWith = (line1: string) => ({
  operation: 'create-shipment',
  shipmentRef: 'acme-A-1842-ship',
  orderId: 'A-1842',
  address: { line1, city: 'Berlin', postalCode: '10115', country: 'DE' },
});

function refusedNaming(fn: () => unknown, field: string, digits: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, String(err));
    assert.equal(err.code, 'InvalidIntent');
    assert.equal(err.details.field, field);
    assert.equal(err.details.reason, 'card-number');
    assert.match(err.message, new RegExp(`: ${field.replace('.', '\\.')}: looks like a card number`));
    const said = `${err.message} ${JSON.stringify(err.details)}`;
    assert.ok(!said.includes(digits) && !said.includes(digits.replace(/\D/g, '')), said);
    assert.ok(noLongDigitRun(said), said);
    return true;
  });
}

describe('findCardNumbers: Luhn over digit runs', () => {
  const positives: Array<[string, string]> = [
    ['4242 4242 4242 4242', '4242'],
    ['4242-4242-4242-4242', '4242'],
    ['4242424242424242', '4242'],
    ['378282246310005', '0005'], // Amex, 15 digits
    ['3782 822463 10005', '0005'], // Amex as printed, 4-6-5
    ['5555 5555 5555 4444', '4444'],
    ['4222222222222', '2222'], // 13-digit Visa
    ['6011 0009 9013 9424', '9424'],
    ['4242\u00a04242\u00a04242\u00a04242', '4242'], // no-break spaces, as pasted
    ['4242–4242–4242–4242', '4242'], // en dashes
  ];
  for (const [text, last4] of positives) {
    it(`finds ${JSON.stringify(text)}`, () => {
      assert.deepEqual(
        findCardNumbers(`card: ${text}, thanks`).map((m) => [m.last4, m.index]),
        [[last4, 6]],
      );
      assert.equal(maskCardNumbers(`card: ${text}, thanks`), `card: •••• ${last4}, thanks`);
    });
  }

  it('finds a card number followed by one more group, or after a date, or two in a row', () => {
    assert.equal(maskCardNumbers('4242 4242 4242 4242 123'), '•••• 4242 123');
    assert.equal(maskCardNumbers('paid 2026-08-28 4242424242424242'), 'paid 2026-08-28 •••• 4242');
    assert.equal(
      maskCardNumbers('4242 4242 4242 4242 5555 5555 5555 4444 and 378282246310005'),
      '•••• 4242 •••• 4444 and •••• 0005',
    );
  });

  const negatives: Array<[string, string]> = [
    ['an order number that fails Luhn', 'order 4242 4242 4242 4241'],
    ['another that fails Luhn', 'ref 1234567812345678'],
    ['a US phone number', 'call +1 415-555-0100 or (415) 555-0100'],
    ['an international phone number', '+44 20 7946 0958'],
    ['a 12-digit run', 'invoice 424242424242'],
    ['an ISO date and time', 'on 2026-08-28T10:00:00Z, renewed 2026-08-28'],
    ['a 20-digit run', 'tracking 12345678901234567890 and 42424242424242424242'],
    ['a German IBAN', 'IBAN DE89 3704 0044 0532 0130 00'],
    ['all zeros', '0000 0000 0000 0000'],
    ['digits split by other characters', '4242.4242.4242.4242 4242/4242/4242/4242 4242  4242  4242  4242'],
    ['amounts and quantities', '49.90 USD for 2 seats, order A-1842'],
  ];
  for (const [what, text] of negatives) {
    it(`does not flag ${what}`, () => {
      assert.deepEqual(findCardNumbers(text), []);
      assert.equal(containsCardNumber(text), false);
      assert.equal(maskCardNumbers(text), text);
    });
  }

  it('takes only runs that start with an issuer prefix, so a Luhn-valid millisecond timestamp is not a card', () => {
    // 1764590000006 passes Luhn (one number in ten does), but no card network issues numbers starting with 1.
    assert.equal(luhnValid('1764590000006'), true);
    assert.deepEqual(findCardNumbers('renewal receipt ops-1764590000006-ab12cd'), []);
    assert.deepEqual(findCardNumbers('order 9900000000000000007'), []);
    for (const pan of ['2221000000000009', '30569309025904', '3530111333300000', '6011000990139424']) {
      assert.equal(findCardNumbers(`card ${pan}`).length, 1, pan);
    }
  });

  it('checks Luhn', () => {
    assert.equal(luhnValid('4242424242424242'), true);
    assert.equal(luhnValid('4242424242424241'), false);
    assert.equal(luhnValid('79927398713'), true);
    assert.equal(luhnValid('42x2'), false);
  });

  it('masks to a fixed point: what it leaves is never detected again', () => {
    const texts = [
      'x 4242 4242 4242 4242 4242 4242 4242 4242 4242 4242',
      '4242424242424242 5555555555554444 4000056655665556',
      '4242 4242 4242 4242 1234 5678 9012 3456 7',
    ];
    for (const text of texts) {
      const masked = maskCardNumbers(text);
      assert.deepEqual(findCardNumbers(masked), [], masked);
      assert.equal(maskCardNumbers(masked), masked);
    }
  });
});

describe('findCardNumberField and maskCardNumbersIn over nested values', () => {
  it('names the first field by its dotted path', () => {
    assert.deepEqual(findCardNumberField({ a: 'ok', address: { line1: `see ${VISA}` } }), {
      field: 'address.line1',
      inKey: false,
    });
    assert.deepEqual(findCardNumberField({ items: ['fine', { note: VISA }] }), { field: 'items.1.note', inKey: false });
    assert.deepEqual(findCardNumberField(VISA), { field: '(root)', inKey: false });
    assert.deepEqual(findCardNumberField({ meta: { [VISA]: 1 } }), { field: 'meta', inKey: true });
    assert.equal(findCardNumberField({ n: 4242424242424242, s: 'A-1842', b: true, z: null }), undefined);
  });

  it('masks every string and leaves the rest as it is', () => {
    const value = { a: VISA, n: 3, nested: { list: [`x ${VISA}`, 7, null] } };
    assert.deepEqual(maskCardNumbersIn(value), { a: '•••• 4242', n: 3, nested: { list: ['x •••• 4242', 7, null] } });
    assert.equal(value.a, VISA, 'the input is not changed');
  });
});

describe('the registry refuses card numbers in any string of an intent', () => {
  it('refuses a charge with one in its description, naming the field and never the digits', () => {
    refusedNaming(() => tools.parseIntent(chargeWith(`Renewal, card ${VISA}`)), 'description', VISA);
    refusedNaming(() => tools.parseIntent(chargeWith('card 378282246310005')), 'description', '378282246310005');
  });

  it('refuses an email with one in its body', () => {
    refusedNaming(() => tools.parseIntent(emailWith(`Hi, my card is ${VISA}, exp 12/28.`)), 'body', VISA);
    refusedNaming(
      () => tools.parseIntent(emailWith('Hi,\n\nplease use 4242-4242-4242-4242 from now on.')),
      'body',
      '4242-4242-4242-4242',
    );
  });

  it('refuses one in a nested field, an identifier and the operation itself', () => {
    refusedNaming(() => tools.parseIntent(shipmentWith(`Apt 3, ${VISA}`)), 'address.line1', VISA);
    refusedNaming(
      () => tools.parseIntent({ ...chargeWith('ok'), merchantReference: '4242424242424242' }),
      'merchantReference',
      VISA,
    );
    assert.throws(
      () => tools.parseIntent({ operation: '4242424242424242' }),
      (err: unknown) =>
        err instanceof RetrysafeError &&
        err.code === 'InvalidIntent' &&
        err.details.field === 'operation' &&
        noLongDigitRun(err.message),
    );
  });

  it('refuses one in a field the schema does not know, before the schema names it as unknown', () => {
    refusedNaming(() => tools.parseIntent({ ...chargeWith('ok'), notes: VISA }), 'notes', VISA);
  });

  it('refuses one that only the schema would assemble (a transform that joins parts)', () => {
    const joiner = defineTool({
      name: 'joiner',
      version: 1,
      description: 'A test tool.',
      input: z.object({ parts: z.array(z.string()) }).transform((i) => ({ text: i.parts.join('') })),
      kind: 'mutation',
      dedupe: 'idempotency-key',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      summarize: () => 'join',
      execute: async () => committed('x'),
    });
    const registry = createToolRegistry([joiner]);
    refusedNaming(() => registry.parseIntent({ operation: 'joiner', parts: ['42424242', '42424242'] }), 'text', VISA);
  });

  it('leaves intents without card numbers exactly as before', () => {
    const plain = tools.parseIntent(chargeWith('Renewal of order A-1842 on 2026-08-28, call +1 415-555-0100'));
    assert.equal(plain.description, 'Renewal of order A-1842 on 2026-08-28, call +1 415-555-0100');
    assert.deepEqual(tools.parseIntent(plain), plain);
    assert.deepEqual(tools.parseIntent(chargeWith('ok'), { cardNumbers: 'mask' }), tools.parseIntent(chargeWith('ok')));
  });
});

describe('masking: the registry output and the hash input never hold the digits', () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['a charge description', chargeWith(`Renewal, card ${VISA}`), 'description', 'Renewal, card •••• 4242'],
    ['an email body', emailWith(`Hi, my card is ${VISA}, exp 12/28.`), 'body', 'Hi, my card is •••• 4242, exp 12/28.'],
  ];
  for (const [what, raw, field, expected] of cases) {
    it(`masks ${what} before it is hashed, previewed or summarized`, () => {
      const intent = tools.parseIntent(raw, { cardNumbers: 'mask' });
      assert.equal(intent[field], expected);
      const seen = [
        JSON.stringify(intent),
        canonicalJson(intent),
        JSON.stringify(tools.preview(intent)),
        tools.summarize(intent),
        JSON.stringify(tools.dryRun(intent)),
      ].join('\n');
      assert.ok(!seen.includes('4242 4242') && !seen.includes('42424242'), seen);
      // A fixed point: the action re-parses what it was claimed with (default: refuse) and gets the same hash.
      const again = tools.parseIntent(intent);
      assert.deepEqual(again, intent);
      assert.equal(tools.hash(again), tools.hash(intent));
      // Another card with the same last four gives the same intent and hash: nothing else of it is kept.
      const otherCard = String(raw[field]).replace(VISA, '4000 0000 1000 4242');
      const other = tools.parseIntent({ ...raw, [field]: otherCard }, { cardNumbers: 'mask' });
      assert.equal(tools.hash(other), tools.hash(intent));
    });
  }

  it('masks a nested field', () => {
    const intent = tools.parseIntent(shipmentWith(`Apt 3, ${VISA}`), { cardNumbers: 'mask' });
    assert.deepEqual(intent.address, { line1: 'Apt 3, •••• 4242', city: 'Berlin', postalCode: '10115', country: 'DE' });
  });

  it('still refuses an identifier that the mask would make invalid, by the schema, naming the field', () => {
    assert.throws(
      () => tools.parseIntent({ ...chargeWith('ok'), merchantReference: '4242424242424242' }, { cardNumbers: 'mask' }),
      (err: unknown) =>
        err instanceof RetrysafeError &&
        err.code === 'InvalidIntent' &&
        err.details.field === 'merchantReference' &&
        noLongDigitRun(err.message),
    );
  });

  it('refuses a card number in a field name even when masking (a name cannot be masked)', () => {
    const registry = createToolRegistry([
      defineTool({
        name: 'tagger',
        version: 1,
        description: 'A test tool.',
        input: z.object({ tags: z.record(z.string(), z.string()) }),
        kind: 'mutation',
        dedupe: 'idempotency-key',
        readAfterWriteLagMs: 0,
        riskClass: 'routine-message',
        summarize: () => 'tag',
        execute: async () => committed('x'),
      }),
    ]);
    assert.throws(
      () => registry.parseIntent({ operation: 'tagger', tags: { '4242424242424242': 'x' } }, { cardNumbers: 'mask' }),
      (err: unknown) => err instanceof RetrysafeError && err.details.field === 'tags' && noLongDigitRun(err.message),
    );
  });
});

describe('the tenant policy chooses masking; prepareAction applies it', () => {
  const config = parseTenantPolicyConfig({
    default: { autoApproveBelowCents: 2_500 },
    tenants: { maskco: { cardNumbersInText: 'mask' }, strict: { cardNumbersInText: 'refuse' } },
  });

  it('parses cardNumbersInText and refuses other values, naming the field', () => {
    assert.equal(policyForTenant(config, 'maskco').cardNumbersInText, 'mask');
    assert.throws(
      () => parseTenantPolicyConfig({ tenants: { acme: { cardNumbersInText: 'allow' } } }),
      (err: unknown) =>
        err instanceof RetrysafeError &&
        err.details.field === 'tenants.acme.cardNumbersInText' &&
        /must be one of refuse, mask/.test(err.message),
    );
  });

  it('defaults to refuse: no config, no tenant, an unknown tenant, a tenant without the field', () => {
    assert.equal(cardNumberModeFor(undefined, 'maskco'), 'refuse');
    assert.equal(cardNumberModeFor(config, undefined), 'refuse');
    assert.equal(cardNumberModeFor(config, 'nobody'), 'refuse');
    assert.equal(cardNumberModeFor(config, 'strict'), 'refuse');
    assert.equal(cardNumberModeFor(config, 'maskco'), 'mask');
    assert.equal(cardNumberModeFor(parseTenantPolicyConfig({ default: { cardNumbersInText: 'mask' } }), 'any'), 'mask');
  });

  const { prepareAction } = createPrepareAction({ tools, tenantPolicies: config });

  it("masks for a tenant that chose it, and the prepared hash is the masked intent's", async () => {
    const prepared = await prepareAction({ intent: chargeWith(`card ${VISA}`), tenant: 'maskco' });
    assert.equal(prepared.intent.description, 'card •••• 4242');
    assert.equal(prepared.requestHash, tools.hash(tools.parseIntent(prepared.intent)));
    assert.ok(!JSON.stringify(prepared).includes('4242 4242'));
  });

  for (const tenant of ['strict', 'nobody', undefined]) {
    it(`refuses for ${tenant === undefined ? 'a run that passes no tenant' : `tenant ${tenant}`}, as a typed failure`, async () => {
      await assert.rejects(
        prepareAction({ intent: emailWith(`card ${VISA}`), ...(tenant ? { tenant } : {}) }),
        (err: unknown) => {
          assert.ok(err instanceof ApplicationFailure);
          assert.equal(err.type, 'InvalidIntent');
          assert.equal(err.nonRetryable, true);
          assert.equal((err.details?.[0] as { field?: string }).field, 'body');
          assert.ok(noLongDigitRun(err.message), err.message);
          return true;
        },
      );
    });
  }

  it('refuses without tenant policies at all', async () => {
    const bare = createPrepareAction({ tools });
    await assert.rejects(bare.prepareAction({ intent: chargeWith(VISA), tenant: 'maskco' }), /description: looks like/);
  });
});
