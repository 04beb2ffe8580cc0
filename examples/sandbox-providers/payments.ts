import { Collection, defineMutation, reject } from './framework';
import type { ProviderDefinition } from './framework';
import { ChargeRequest, RefundRequest } from './resources';
import type { Charge, Refund } from './resources';

/**
 * A Stripe-like card processor: every mutation needs an Idempotency-Key, a repeated key with the same
 * parameters replays the stored answer, with other parameters it is a 409. Lists are lagged, so a
 * lookup right after a lost reply may not see the charge yet. Like Stripe, which may remove keys once they
 * are 24 h old, it can forget keys (admin config `keyRetentionMs`): a key older than that is a new charge,
 * while the charge it first made stays listed under `idempotencyKey`.
 */
export function createPaymentsProvider(): ProviderDefinition {
  const charges = new Collection<Charge>('charges', 'ch');
  const refunds = new Collection<Refund>('refunds', 're');

  const createCharge = defineMutation({
    op: 'charges.create',
    path: '/v1/charges',
    schema: ChargeRequest,
    dedupe: 'idempotency-key',
    decline: { status: 402, code: 'card_declined', message: 'The card was declined; nothing was charged' },
    successStatus: 201,
    event: 'charge.succeeded',
    reference: (input) => input.merchantReference,
    commit: (input, idempotencyKey = '') =>
      charges.insert({
        object: 'charge',
        amountCents: input.amountCents,
        amountRefundedCents: 0,
        currency: input.currency,
        customerId: input.customerId,
        merchantReference: input.merchantReference,
        ...(input.description === undefined ? {} : { description: input.description }),
        idempotencyKey,
        status: 'succeeded',
      }),
  });

  const createRefund = defineMutation({
    op: 'refunds.create',
    path: '/v1/refunds',
    schema: RefundRequest,
    dedupe: 'idempotency-key',
    decline: { status: 422, code: 'refund_declined', message: 'The refund was declined; nothing was refunded' },
    successStatus: 201,
    event: 'refund.succeeded',
    reference: (input) => input.merchantReference,
    commit: (input, idempotencyKey = '') => {
      const charge = charges.get(input.chargeId);
      if (!charge) {
        throw reject({ status: 404, code: 'charge_not_found', message: `No charge ${input.chargeId}` });
      }
      const refundedAfter = charge.amountRefundedCents + input.amountCents;
      if (refundedAfter > charge.amountCents) {
        throw reject({
          status: 422,
          code: 'refund_exceeds_charge',
          message: `Refunds would total ${refundedAfter} cents, more than the ${charge.amountCents} charged`,
        });
      }
      charge.amountRefundedCents += input.amountCents;
      return refunds.insert({
        object: 'refund',
        chargeId: input.chargeId,
        amountCents: input.amountCents,
        merchantReference: input.merchantReference,
        ...(input.reason === undefined ? {} : { reason: input.reason }),
        idempotencyKey,
        status: 'succeeded',
      });
    },
  });

  return {
    kind: 'payments',
    collections: [charges, refunds],
    mutations: [createCharge, createRefund],
    lookups: [
      { path: '/v1/charges', collection: charges, filters: ['idempotencyKey', 'merchantReference'] },
      { path: '/v1/refunds', collection: refunds, filters: ['idempotencyKey', 'merchantReference', 'chargeId'] },
    ],
    reads: [
      { path: '/v1/charges/:id', collection: charges, notFound: notFound('charge') },
      { path: '/v1/refunds/:id', collection: refunds, notFound: notFound('refund') },
    ],
  };
}

function notFound(what: string) {
  return { status: 404, code: `${what}_not_found`, message: `No such ${what}` };
}
