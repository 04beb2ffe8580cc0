import { Collection, defineMutation, reject } from './framework';
import type { ProviderDefinition } from './framework';
import { ReleaseRequest, ReservationRequest } from './resources';
import type { Release, Reservation } from './resources';

/**
 * Stock reservations with keyed semantics like payments. A release is the compensation of a
 * reservation; releasing twice under different keys is refused, so a saga must key its undo too.
 */
export function createInventoryProvider(): ProviderDefinition {
  const reservations = new Collection<Reservation>('reservations', 'rsv');
  const releases = new Collection<Release>('releases', 'rel');

  const reserve = defineMutation({
    op: 'reservations.create',
    path: '/v1/reservations',
    schema: ReservationRequest,
    dedupe: 'idempotency-key',
    decline: { status: 422, code: 'out_of_stock', message: 'Not enough stock; nothing was reserved' },
    successStatus: 201,
    event: 'reservation.created',
    reference: (input) => input.orderId,
    commit: (input, idempotencyKey = '') =>
      reservations.insert({
        object: 'reservation',
        sku: input.sku,
        quantity: input.quantity,
        orderId: input.orderId,
        idempotencyKey,
        status: 'reserved',
      }),
  });

  const release = defineMutation({
    op: 'releases.create',
    path: '/v1/releases',
    schema: ReleaseRequest,
    dedupe: 'idempotency-key',
    decline: { status: 422, code: 'release_rejected', message: 'The release was rejected; the stock stays reserved' },
    successStatus: 201,
    event: 'reservation.released',
    reference: (input) => input.reservationId,
    commit: (input, idempotencyKey = '') => {
      const reservation = reservations.get(input.reservationId);
      if (!reservation) {
        throw reject({ status: 404, code: 'reservation_not_found', message: `No reservation ${input.reservationId}` });
      }
      if (reservation.status === 'released') {
        throw reject({
          status: 422,
          code: 'reservation_already_released',
          message: `Reservation ${input.reservationId} was already released under another key`,
        });
      }
      reservation.status = 'released';
      return releases.insert({
        object: 'release',
        reservationId: input.reservationId,
        idempotencyKey,
        status: 'released',
      });
    },
  });

  return {
    kind: 'inventory',
    collections: [reservations, releases],
    mutations: [reserve, release],
    lookups: [
      { path: '/v1/reservations', collection: reservations, filters: ['idempotencyKey', 'orderId'] },
      { path: '/v1/releases', collection: releases, filters: ['idempotencyKey', 'reservationId'] },
    ],
    reads: [
      {
        path: '/v1/reservations/:id',
        collection: reservations,
        notFound: { status: 404, code: 'reservation_not_found', message: 'No such reservation' },
      },
      {
        path: '/v1/releases/:id',
        collection: releases,
        notFound: { status: 404, code: 'release_not_found', message: 'No such release' },
      },
    ],
  };
}
