import { ChargeInput, RefundInput } from './schemas';
import { money, query, sandboxLookup, sandboxPost } from './sandbox-rest';
import { defineTool } from 'retrysafe';

/** Payments: charges and refunds keyed by Idempotency-Key, looked up by key on a lagging read API. */
/** What charges and refunds share: the provider remembers keys for 24 h and its reads lag by up to 2 s. */
const PAYMENTS = {
  kind: 'mutation',
  dedupe: 'idempotency-key',
  readAfterWriteLagMs: 2_000,
  keyRetentionMs: 24 * 60 * 60 * 1000,
  riskClass: 'money-movement',
  amountField: 'amountCents',
  limits: { amountCents: { max: 1_000_000 } },
} as const;

export function paymentTools(baseUrl: string) {
  const charge = defineTool({
    name: 'charge',
    version: 1,
    description: "Charge a customer's payment method. amountCents is an integer number of minor units (4990 = 49.90).",
    input: ChargeInput,
    ...PAYMENTS,
    currencyField: 'currency',
    summarize: (i) => `charge ${money(i.amountCents, i.currency)} to ${i.customerId} for ${i.merchantReference}`,
    dryRun: (i) => ({
      target: `customer ${i.customerId} (payment method ${i.paymentMethod})`,
      scope: `one charge of ${i.amountCents} ${i.currency.toUpperCase()} minor units`,
    }),
    compensation: {
      tool: 'refund',
      input: (i, done) => ({
        chargeId: done.providerRef,
        amountCents: i.amountCents,
        merchantReference: i.merchantReference,
      }),
    },
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/charges', sendsKey: true }, i, ctx),
    lookup: (_i, ctx) => sandboxLookup(baseUrl, `/v1/charges${query({ idempotencyKey: ctx.key })}`, ctx),
  });
  const refund = defineTool({
    name: 'refund',
    version: 1,
    description:
      'Refund all or part of an earlier charge, by its charge id. amountCents is an integer number of minor units.',
    input: RefundInput,
    ...PAYMENTS,
    summarize: (i) => `refund ${(i.amountCents / 100).toFixed(2)} (charge currency) of ${i.chargeId}`,
    dryRun: (i) => ({ target: `charge ${i.chargeId}`, scope: `one refund of ${i.amountCents} minor units` }),
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/refunds', sendsKey: true }, i, ctx),
    lookup: (_i, ctx) => sandboxLookup(baseUrl, `/v1/refunds${query({ idempotencyKey: ctx.key })}`, ctx),
  });
  return [charge, refund] as const;
}
