import { Collection, defineMutation } from './framework';
import type { ProviderDefinition } from './framework';
import { ShipmentRequest } from './resources';
import type { Shipment } from './resources';

/**
 * A carrier API that dedupes on the caller's shipmentRef instead of a key header: the same ref and body
 * answers the existing shipment (200), the same ref with another body is a 409. The lookup by ref
 * is lagged. Its decline (address_undeliverable) is the classic permanent failure a saga must undo.
 */
export function createShippingProvider(): ProviderDefinition {
  const shipments = new Collection<Shipment>('shipments', 'shp');

  const createShipment = defineMutation({
    op: 'shipments.create',
    path: '/v1/shipments',
    schema: ShipmentRequest,
    dedupe: (input) => input.shipmentRef,
    conflict: {
      status: 409,
      code: 'shipment_ref_reused',
      message: 'This shipmentRef already names a shipment with a different order or address; use a new ref',
    },
    decline: { status: 422, code: 'address_undeliverable', message: 'The carrier cannot deliver to this address' },
    successStatus: 201,
    event: 'shipment.created',
    reference: (input) => input.shipmentRef,
    commit: (input) =>
      shipments.insert({
        object: 'shipment',
        shipmentRef: input.shipmentRef,
        orderId: input.orderId,
        address: input.address,
        labelUrl: `https://labels.sandbox.invalid/${encodeURIComponent(input.shipmentRef)}.pdf`,
        status: 'label_created',
      }),
  });

  return {
    kind: 'shipping',
    collections: [shipments],
    mutations: [createShipment],
    lookups: [{ path: '/v1/shipments', collection: shipments, filters: ['shipmentRef', 'orderId'] }],
    reads: [
      {
        path: '/v1/shipments/:id',
        collection: shipments,
        notFound: { status: 404, code: 'shipment_not_found', message: 'No such shipment' },
      },
    ],
  };
}
