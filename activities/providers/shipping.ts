import type { OperationRoute } from './route';
import { query, withoutOperation } from './route';

/** Shipping: labels carry our stable shipment reference; look it up before creating another. */
export const createShipmentRoute: OperationRoute<'create-shipment'> = {
  sendPath: '/v1/shipments',
  body: withoutOperation,
  sendsKey: false,
  lookupPath: (i) => `/v1/shipments${query({ shipmentRef: i.shipmentRef })}`,
};
