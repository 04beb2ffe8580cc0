import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exampleRegistry } from '../../examples/tools';
import { decide } from '../../policies/decision-table';
import { buildDryRun, type DryRunFacts } from '../../policies/dry-run';
import { amountOf, currencyOf } from '../../policies/tool-facts';
import type { Intent } from '../../policies/tool-registry';

const tools = exampleRegistry();
const NOW = '2026-08-28T10:00:00.000Z';

/** The dry-run facts of an intent, gathered from its tool as the action workflow does. */
function factsOf(intent: Intent): DryRunFacts {
  const tool = tools.describe(intent);
  const preview = tools.preview(intent);
  const amountCents = amountOf(tool, intent);
  const currency = currencyOf(tool, intent);
  return {
    operation: tool.name,
    summary: tools.summarize(intent),
    preview,
    ...tools.dryRun(intent),
    ...(amountCents !== undefined ? { amountCents } : {}),
    ...(currency !== undefined ? { currency } : {}),
  };
}

describe('buildDryRun', () => {
  it('shows a charge with its target, reach, amount and the exact hash the approval signs', () => {
    const intent = tools.parseIntent({
      operation: 'charge',
      amountCents: 7_000,
      currency: 'USD',
      customerId: 'cus_1842',
      paymentMethod: 'pm_card_visa',
      merchantReference: 'A-1842',
    });
    const decision = decide(tools.describe(intent), intent);
    const key = 'charge:v1:acme:evt-1';
    const dryRun = buildDryRun(key, factsOf(intent), tools.hash(intent), decision, NOW);
    assert.deepEqual(dryRun, {
      key,
      operation: 'charge',
      target: 'customer cus_1842 (payment method pm_card_visa)',
      payload: tools.preview(intent),
      scope: 'one charge of 7000 USD minor units',
      summary: 'charge 70.00 USD to cus_1842 for A-1842',
      amountCents: 7_000,
      currency: 'usd',
      policy: decision,
      requestHash: tools.hash(intent),
      createdAt: NOW,
    });
    assert.equal(dryRun.policy.mode, 'confirm');
  });

  it('leaves amount and currency out for a tool that moves no money, and shows the masked payload', () => {
    const intent = tools.parseIntent({
      operation: 'send-email',
      to: 'alice@example.com',
      subject: 'Receipt',
      body: 'Thanks.',
    });
    const dryRun = buildDryRun(
      'send-email:v1:acme:evt-2',
      factsOf(intent),
      tools.hash(intent),
      decide(tools.describe(intent), intent),
      NOW,
    );
    assert.equal(Object.prototype.hasOwnProperty.call(dryRun, 'amountCents'), false);
    assert.equal(Object.prototype.hasOwnProperty.call(dryRun, 'currency'), false);
    assert.equal(dryRun.payload.to, 'a***@example.com');
    assert.equal(dryRun.target, 'recipient a***@example.com');
    assert.ok(!JSON.stringify(dryRun).includes('alice@'), 'the full address is only bound by the hash');
  });
});
