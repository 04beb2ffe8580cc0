import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatActionKey } from '../../policies/action-key';
import { shipmentRefFor } from '../../examples/tools/references';
import type { RenewalResult } from '../../examples/workflows/renewal';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { countForKey } from '../support/ledger';
import { renewalInput, uniqueEvent } from '../support/renewal-input';

const TENANTS = ['acme', 'globex'] as const;
const key = (operation: string, tenant: string, eventId: string) =>
  formatActionKey({ operation, version: 1, tenant, eventId });

/**
 * Two tenants whose renewals share an order ID (and even the event ID) are two businesses: every
 * provider-side reference derives from the action key or includes the tenant, so each gets its own
 * reservation, charge and shipment, counted at the providers.
 */
describe('provider references are tenant-scoped', () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments', 'inventory', 'shipping'] });
    await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await stack?.stop();
  });

  it("gives two tenants' renewals of the same order ID two shipments, two charges and two reservations", async () => {
    const eventId = uniqueEvent('shared-order');
    const orderId = `A-${eventId}`.slice(0, 80);
    const inputs = TENANTS.map((tenant) => renewalInput(eventId, { tenant, orderId }));
    const results = (await Promise.all(
      inputs.map(async (input) => (await stack.retrysafe.startRenewal(input)).result()),
    )) as RenewalResult[];
    for (const [i, result] of results.entries())
      assert.equal(result.status, 'renewed', `${TENANTS[i]}: ${JSON.stringify(result)}`);

    const shipping = await stack.providers.shipping.ledger();
    const shipments = (shipping.records.shipments ?? []) as unknown as Array<{
      id: string;
      shipmentRef: string;
      orderId: string;
    }>;
    const ours = shipments.filter((s) => s.orderId === orderId);
    assert.equal(ours.length, 2, `two shipments for order ${orderId}: ${JSON.stringify(ours)}`);
    assert.deepEqual(
      ours.map((s) => s.shipmentRef).sort(),
      TENANTS.map((t) => shipmentRefFor(t, orderId)).sort(),
      'each with its own tenant-scoped reference',
    );
    for (const tenant of TENANTS) assert.ok(shipmentRefFor(tenant, orderId).startsWith(`${tenant}-`));
    const shipRequests = shipping.requests.filter((r) => ours.some((s) => s.id === r.recordId));
    assert.deepEqual(
      shipRequests.map((r) => r.outcome),
      ['committed', 'committed'],
      'the carrier committed twice and replayed nothing across tenants',
    );
    assert.deepEqual(
      results.map((r) => r.shipmentId).sort(),
      ours.map((s) => s.id).sort(),
      'each run got its own shipment back',
    );

    const payments = await stack.providers.payments.ledger();
    const inventory = await stack.providers.inventory.ledger();
    for (const tenant of TENANTS) {
      const charge = countForKey(payments, key('charge', tenant, eventId));
      assert.deepEqual([charge.records, charge.committed], [1, 1], `one charge for ${tenant}`);
      const reservation = countForKey(inventory, key('reserve', tenant, eventId), 'reservations');
      assert.deepEqual([reservation.records, reservation.committed], [1, 1], `one reservation for ${tenant}`);
    }
    assert.notEqual(results[0].chargeId, results[1].chargeId);
    assert.notEqual(results[0].reservationId, results[1].reservationId);
    assert.notEqual(results[0].shipmentId, results[1].shipmentId);
  });
});
