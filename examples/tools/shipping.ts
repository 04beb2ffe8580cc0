import { CreateShipmentInput } from './schemas';
import { query, sandboxLookup, sandboxPost } from './sandbox-rest';
import { defineTool } from 'retrysafe';

/** Shipping: labels carry our stable shipment reference; look it up before creating another. */
export function shippingTools(baseUrl: string) {
  const createShipment = defineTool({
    name: 'create-shipment',
    version: 1,
    description: 'Create a shipment for an order to a postal address.',
    input: CreateShipmentInput,
    kind: 'mutation',
    dedupe: 'lookup',
    readAfterWriteLagMs: 2_000,
    riskClass: 'routine-message',
    summarize: (i) => `ship ${i.orderId} to ${i.address.city}, ${i.address.country} (ref ${i.shipmentRef})`,
    dryRun: (i) => ({
      target: `order ${i.orderId} to ${i.address.city}, ${i.address.country}`,
      scope: `one shipment (ref ${i.shipmentRef})`,
    }),
    reference: (i) => i.shipmentRef,
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/shipments', sendsKey: false }, i, ctx),
    lookup: (i, ctx) => sandboxLookup(baseUrl, `/v1/shipments${query({ shipmentRef: i.shipmentRef })}`, ctx),
  });
  return [createShipment] as const;
}
