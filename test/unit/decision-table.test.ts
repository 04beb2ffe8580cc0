import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DECISION_TABLE, decide, decideForRiskClass } from '../../policies/decision-table';
import { RetrysafeError } from '../../policies/errors';
import {
  DEFAULT_AUTO_APPROVE_BELOW_CENTS,
  DEFAULT_HUMAN_ONLY_ABOVE_CENTS,
  type TenantPolicy,
} from '../../policies/tenant-policy';
import { RISK_CLASSES } from '../../policies/tool';
import type { ToolDescriptor } from '../../policies/tool';
import type { Intent } from '../../policies/tool-registry';
import { exampleRegistry } from '../../examples/tools';

const tools = exampleRegistry();

/** The table applied to an intent under its tool's descriptor, as the workflow does. */
const decideIntent = (intent: Intent, ctx?: Parameters<typeof decide>[2]) =>
  decide(tools.describe(intent), intent, ctx);

const charge = (amountCents: number) =>
  tools.parseIntent({
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_1842',
    paymentMethod: 'pm_card_visa',
    merchantReference: 'A-1842',
  });
const refund = (amountCents: number) =>
  tools.parseIntent({ operation: 'refund', chargeId: 'ch_1', amountCents, merchantReference: 'A-1842' });
const email = tools.parseIntent({
  operation: 'send-email',
  to: 'alice@example.com',
  subject: 'Receipt',
  body: 'Thanks.',
});
const ticket = tools.parseIntent({
  operation: 'create-ticket',
  externalRef: 'T-9',
  title: 'Declined',
  body: 'See run',
});

/** A descriptor of a user-defined tool, as a worker's registry would produce it. */
const descriptor = (overrides: Partial<ToolDescriptor>): ToolDescriptor => ({
  name: 'custom',
  version: 1,
  kind: 'mutation',
  dedupe: 'idempotency-key',
  readAfterWriteLagMs: 0,
  riskClass: 'routine-message',
  hasLookup: false,
  limits: {},
  ...overrides,
});

describe('decision table', () => {
  it('has a row for every risk class', () => {
    for (const riskClass of RISK_CLASSES) {
      assert.ok(
        DECISION_TABLE.some((r) => r.riskClass === riskClass),
        riskClass,
      );
    }
  });

  it('has unique row ids', () => {
    const ids = DECISION_TABLE.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('runs reads automatically, even when ambiguous', () => {
    assert.equal(decideForRiskClass('read', {}).mode, 'automatic');
    assert.equal(decideForRiskClass('read', { ambiguous: true }).mode, 'automatic');
  });

  it('runs routine messages automatically and asks for confirmation when ambiguous', () => {
    const plain = decideIntent(ticket);
    assert.equal(plain.mode, 'automatic');
    assert.equal(plain.riskClass, 'routine-message');
    assert.deepEqual(plain.rows, ['routine-message.automatic']);
    const unsure = decideIntent(ticket, { ambiguous: true });
    assert.equal(unsure.mode, 'confirm');
    assert.ok(unsure.rows.includes('routine-message.ambiguous'));
  });

  it('asks for confirmation of customer contact', () => {
    const d = decideIntent(email);
    assert.equal(d.mode, 'confirm');
    assert.equal(d.riskClass, 'customer-message');
    assert.equal(d.exactPreview, true);
  });

  it('runs an email from an approved template automatically and confirms one from any other', () => {
    const receipt = tools.parseIntent({
      operation: 'send-email',
      to: 'alice@example.com',
      subject: 'Receipt',
      body: 'Thanks.',
      template: 'renewal-receipt',
    });
    const d = decideIntent(receipt);
    assert.equal(d.riskClass, 'routine-message');
    assert.equal(d.mode, 'automatic');
    const unknownTemplate = tools.parseIntent({
      operation: 'send-email',
      to: 'alice@example.com',
      subject: 'Hi',
      body: 'Hi.',
      template: 'promo',
    });
    assert.equal(decideIntent(unknownTemplate).mode, 'confirm');
  });

  it("follows the descriptor's risk class for user-defined tools", () => {
    const drop = descriptor({ name: 'drop-table', riskClass: 'destructive' });
    const d = decide(drop, { operation: 'drop-table', table: 'orders' });
    assert.equal(d.mode, 'confirm');
    assert.equal(d.riskClass, 'destructive');
    assert.deepEqual(d.rows, ['destructive.confirm']);
    assert.equal(
      decide(descriptor({ riskClass: 'read' }), { operation: 'custom' }, { ambiguous: true }).mode,
      'automatic',
    );
  });

  it('asks for confirmation with an exact preview of deletes and permission changes', () => {
    const d = decideForRiskClass('destructive', {});
    assert.equal(d.mode, 'confirm');
    assert.equal(d.exactPreview, true);
    assert.equal(decideForRiskClass('destructive', { ambiguous: true }).mode, 'human-only');
  });

  it('asks for confirmation of production changes, human-only when ambiguous', () => {
    assert.equal(decideForRiskClass('production-change', {}).mode, 'confirm');
    assert.equal(decideForRiskClass('production-change', { ambiguous: true }).mode, 'human-only');
  });
});

describe('money movement', () => {
  it('runs 4999 cents automatically under the default low-value limit', () => {
    const d = decideIntent(charge(4_999));
    assert.equal(d.mode, 'automatic');
    assert.deepEqual(d.rows, ['money.low-value']);
    assert.deepEqual(d.limits, {
      autoApproveBelowCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS,
      humanOnlyAboveCents: DEFAULT_HUMAN_ONLY_ABOVE_CENTS,
    });
  });

  it('asks for confirmation at 5000 and 5001 cents', () => {
    assert.equal(decideIntent(charge(5_000)).mode, 'confirm');
    const d = decideIntent(charge(5_001));
    assert.equal(d.mode, 'confirm');
    assert.deepEqual(d.rows, ['money.confirm']);
    assert.match(d.reasons[0], /5001 ≥ autoApproveBelowCents 5000/);
  });

  it('confirms at the human-only limit and is human-only above it', () => {
    assert.equal(decideIntent(charge(DEFAULT_HUMAN_ONLY_ABOVE_CENTS)).mode, 'confirm');
    const d = decideIntent(charge(DEFAULT_HUMAN_ONLY_ABOVE_CENTS + 1));
    assert.equal(d.mode, 'human-only');
    assert.deepEqual(d.rows, ['money.confirm', 'money.above-human-limit']);
  });

  it('is human-only when ambiguous, whatever the amount', () => {
    const d = decideIntent(charge(100), { ambiguous: true });
    assert.equal(d.mode, 'human-only');
    assert.ok(d.rows.includes('money.ambiguous'));
  });

  it('treats refunds like charges', () => {
    assert.equal(decideIntent(refund(4_999)).mode, 'automatic');
    assert.equal(decideIntent(refund(5_001)).mode, 'confirm');
  });

  it('is human-only when a money movement has no amount (fails closed)', () => {
    const d = decideForRiskClass('money-movement', {});
    assert.equal(d.mode, 'human-only');
    assert.deepEqual(d.rows, ['money.no-amount']);
  });

  it('reads the amount from the field the tool names, whatever it is called', () => {
    const payout = descriptor({ name: 'payout', riskClass: 'money-movement', amountField: 'totalMinor' });
    assert.equal(decide(payout, { operation: 'payout', totalMinor: 4_999 }).mode, 'automatic');
    assert.equal(decide(payout, { operation: 'payout', totalMinor: 5_000 }).mode, 'confirm');
    const d = decide(payout, { operation: 'payout', totalMinor: DEFAULT_HUMAN_ONLY_ABOVE_CENTS + 1 });
    assert.equal(d.mode, 'human-only');
    // A field that only looks like an amount is not read: the descriptor decides.
    assert.deepEqual(decide(payout, { operation: 'payout', amountCents: 100 }).rows, ['money.no-amount']);
  });

  it('is human-only when the amount field is missing or not a number (fails closed)', () => {
    const payout = descriptor({ name: 'payout', riskClass: 'money-movement', amountField: 'totalMinor' });
    assert.equal(decide(payout, { operation: 'payout' }).mode, 'human-only');
    assert.deepEqual(decide(payout, { operation: 'payout', totalMinor: '100' }).rows, ['money.no-amount']);
  });

  it('is deterministic', () => {
    assert.deepEqual(decideIntent(charge(7_000)), decideIntent(charge(7_000)));
  });
});

describe('tenant overrides', () => {
  it('applies a tenant low-value limit', () => {
    const tenantPolicy: TenantPolicy = { autoApproveBelowCents: 10_000 };
    assert.equal(decideIntent(charge(7_000)).mode, 'confirm');
    const d = decideIntent(charge(7_000), { tenantPolicy });
    assert.equal(d.mode, 'automatic');
    assert.equal(d.limits.autoApproveBelowCents, 10_000);
  });

  it('applies a tenant human-only limit', () => {
    const d = decideIntent(charge(20_000), { tenantPolicy: { humanOnlyAboveCents: 15_000 } });
    assert.equal(d.mode, 'human-only');
    assert.equal(d.limits.humanOnlyAboveCents, 15_000);
  });

  it('a zero low-value limit leaves nothing automatic', () => {
    assert.equal(decideIntent(charge(1), { tenantPolicy: { autoApproveBelowCents: 0 } }).mode, 'confirm');
  });

  it('adds confirmation to the risk classes a tenant lists', () => {
    const d = decideIntent(ticket, { tenantPolicy: { confirmRiskClasses: ['routine-message'] } });
    assert.equal(d.mode, 'confirm');
    assert.deepEqual(d.rows, ['routine-message.automatic', 'tenant.confirm']);
  });

  it('never loosens a stricter row through confirmRiskClasses', () => {
    const d = decideIntent(charge(500_000), { tenantPolicy: { confirmRiskClasses: ['money-movement'] } });
    assert.equal(d.mode, 'human-only');
  });

  it('refuses a malformed policy passed as input, naming the field', () => {
    const bad = { autoApproveBelowCents: -1 } as TenantPolicy;
    assert.throws(
      () => decideIntent(charge(100), { tenantPolicy: bad }),
      (err: unknown) =>
        err instanceof RetrysafeError &&
        err.code === 'InvalidIntent' &&
        /tenantPolicy\.autoApproveBelowCents/.test(err.message),
    );
    const inconsistent = { autoApproveBelowCents: 9_000, humanOnlyAboveCents: 8_000 };
    assert.throws(() => decideIntent(charge(100), { tenantPolicy: inconsistent }), /humanOnlyAboveCents 8000/);
    const unknownClass = { confirmRiskClasses: ['lunch'] } as unknown as TenantPolicy;
    assert.throws(() => decideIntent(charge(100), { tenantPolicy: unknownClass }), /confirmRiskClasses\.0/);
  });
});
