import type { OperationRoute } from './route';
import { query, withoutOperation } from './route';

/** Payments: charges and refunds keyed by Idempotency-Key, looked up by key on a lagging read API. */
export const chargeRoute: OperationRoute<'charge'> = {
  sendPath: '/v1/charges',
  body: withoutOperation,
  sendsKey: true,
  lookupPath: (_i, key) => `/v1/charges${query({ idempotencyKey: key })}`,
};

export const refundRoute: OperationRoute<'refund'> = {
  sendPath: '/v1/refunds',
  body: withoutOperation,
  sendsKey: true,
  lookupPath: (_i, key) => `/v1/refunds${query({ idempotencyKey: key })}`,
};
