import type { OperationRoute } from './route';
import { query, withoutOperation } from './route';

/** Inventory: reservations and releases keyed by Idempotency-Key. */
export const reserveRoute: OperationRoute<'reserve'> = {
  sendPath: '/v1/reservations',
  body: withoutOperation,
  sendsKey: true,
  lookupPath: (_i, key) => `/v1/reservations${query({ idempotencyKey: key })}`,
};

export const releaseRoute: OperationRoute<'release'> = {
  sendPath: '/v1/releases',
  body: withoutOperation,
  sendsKey: true,
  lookupPath: (_i, key) => `/v1/releases${query({ idempotencyKey: key })}`,
};
