import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countCompensatedRenewal } from '../../scripts/chaos/scenario-saga-compensation';
import type { IterationContext } from '../../scripts/chaos/types';
import type { Ledger, ProviderKind } from '../../examples/sandbox-providers/spawn';

/** The saga scenario's count of one order's effects, from ledgers as the providers return them. */
const ORDER = 'O-e1';

function ledger(kind: ProviderKind, records: Record<string, Array<Record<string, unknown>>>): Ledger {
  return {
    kind,
    records,
    requests: [],
    counts: {},
    inflight: 0,
    committedButUnanswered: 0,
    webhooks: [],
  } as unknown as Ledger;
}

function ctxWith(records: {
  reservations?: Array<Record<string, unknown>>;
  releases?: Array<Record<string, unknown>>;
  charges?: Array<Record<string, unknown>>;
  refunds?: Array<Record<string, unknown>>;
  shipments?: Array<Record<string, unknown>>;
}): IterationContext {
  const providers = {
    inventory: {
      ledger: async () =>
        ledger('inventory', { reservations: records.reservations ?? [], releases: records.releases ?? [] }),
    },
    payments: {
      ledger: async () => ledger('payments', { charges: records.charges ?? [], refunds: records.refunds ?? [] }),
    },
    shipping: { ledger: async () => ledger('shipping', { shipments: records.shipments ?? [] }) },
  };
  return { providers } as unknown as IterationContext;
}

const reservation = { id: 'rsv_1', orderId: ORDER, status: 'released' };
const release = { id: 'rel_1', reservationId: 'rsv_1' };
const charge = { id: 'ch_1', merchantReference: ORDER, amountCents: 4990, amountRefundedCents: 4990 };
const refund = { id: 're_1', merchantReference: ORDER, chargeId: 'ch_1', amountCents: 4990 };
const otherOrder = { id: 'ch_9', merchantReference: 'O-other', amountCents: 100, amountRefundedCents: 0 };

describe('chaos saga-compensation count', () => {
  it('finds the four expected effects and nothing standing after a clean compensation', async () => {
    const c = await countCompensatedRenewal(
      ctxWith({ reservations: [reservation], releases: [release], charges: [charge, otherOrder], refunds: [refund] }),
      ORDER,
    );
    assert.deepEqual(
      { expected: c.expected, gross: c.gross, duplicates: c.duplicates, missing: c.missing, standing: c.standing },
      { expected: 4, gross: 4, duplicates: 0, missing: 0, standing: 0 },
    );
  });

  it('counts a second refund as a duplicate', async () => {
    const c = await countCompensatedRenewal(
      ctxWith({
        reservations: [reservation],
        releases: [release],
        charges: [charge],
        refunds: [refund, { ...refund, id: 're_2' }],
      }),
      ORDER,
    );
    assert.equal(c.duplicates, 1);
    assert.equal(c.missing, 0);
  });

  it('counts a charge never refunded as lost and still standing', async () => {
    const c = await countCompensatedRenewal(
      ctxWith({ reservations: [reservation], releases: [release], charges: [{ ...charge, amountRefundedCents: 0 }] }),
      ORDER,
    );
    assert.equal(c.missing, 1);
    assert.equal(c.standing, 1);
  });

  it('counts a reservation never released and a shipment as standing', async () => {
    const c = await countCompensatedRenewal(
      ctxWith({
        reservations: [{ ...reservation, status: 'reserved' }],
        charges: [charge],
        refunds: [refund],
        shipments: [{ id: 'shp_1', orderId: ORDER }],
      }),
      ORDER,
    );
    assert.equal(c.missing, 1, 'no release');
    assert.equal(c.standing, 2, 'the reservation and the shipment');
    assert.equal(c.shipments, 1);
  });
});
