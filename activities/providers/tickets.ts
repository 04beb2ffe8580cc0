import type { OperationRoute } from './route';
import { query, withoutOperation } from './route';

/** Tickets: no key, but a lookup by our external reference on a read API that lags behind writes. */
export const createTicketRoute: OperationRoute<'create-ticket'> = {
  sendPath: '/v1/tickets',
  body: withoutOperation,
  sendsKey: false,
  lookupPath: (i) => `/v1/tickets${query({ externalRef: i.externalRef })}`,
};
