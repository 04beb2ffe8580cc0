import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSandboxProviders } from '../../examples/sandbox-providers/spawn';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { listOf, Release, Reservation, Shipment } from '../../examples/sandbox-providers/resources';
import { errorOf, eventually, get, post } from './provider-http';

const address = { line1: '221B Baker St', city: 'London', postalCode: 'NW1 6XE', country: 'GB' };

describe('shipping and inventory providers', () => {
  let shipping: SandboxProvider;
  let inventory: SandboxProvider;
  let stopAll: () => Promise<void>;

  before(async () => {
    ({ shipping, inventory, stopAll } = await startSandboxProviders(['shipping', 'inventory']));
  });
  after(async () => {
    await stopAll();
  });
  afterEach(async () => {
    await Promise.all([shipping.reset(), inventory.reset(), shipping.configure({ readLagMs: 0 })]);
  });

  it('dedupes a shipment on its ref: the same body answers the existing label, another body is a 409', async () => {
    const body = { shipmentRef: 'ship-order-1', orderId: 'order-1', address };
    const first = await post(shipping.url, '/v1/shipments', body);
    const again = await post(shipping.url, '/v1/shipments', { ...body, address: { ...address } });
    const changed = await post(shipping.url, '/v1/shipments', { ...body, address: { ...address, city: 'Paris' } });

    assert.equal(first.status, 201);
    assert.equal(again.status, 200);
    assert.deepEqual(Shipment.parse(again.body), Shipment.parse(first.body));
    assert.equal(changed.status, 409);
    assert.equal(errorOf(changed).code, 'shipment_ref_reused');
    const ledger = await shipping.ledger();
    assert.equal(ledger.records.shipments.length, 1);
    assert.deepEqual(
      ledger.requests.map((r) => r.outcome),
      ['committed', 'replayed', 'conflict'],
    );
  });

  it('finds a shipment by ref only once the read lag has passed', async () => {
    await shipping.configure({ readLagMs: 250 });
    const created = Shipment.parse(
      (await post(shipping.url, '/v1/shipments', { shipmentRef: 'ship-lag', orderId: 'order-2', address })).body,
    );
    const Shipments = listOf(Shipment);
    assert.deepEqual(Shipments.parse((await get(shipping.url, '/v1/shipments?shipmentRef=ship-lag')).body).data, []);
    const found = await eventually(async () => {
      const { data } = Shipments.parse((await get(shipping.url, '/v1/shipments?shipmentRef=ship-lag')).body);
      return data.length ? data : undefined;
    });
    assert.deepEqual(found, [created]);
  });

  it('reserves once per key, releases once, and refuses unknown or already released reservations', async () => {
    const reservation = { sku: 'sku-red-mug', quantity: 2, orderId: 'order-3' };
    const reserved = await post(inventory.url, '/v1/reservations', reservation, { key: 'key-reserve' });
    const replayed = await post(inventory.url, '/v1/reservations', reservation, { key: 'key-reserve' });
    const reused = await post(
      inventory.url,
      '/v1/reservations',
      { ...reservation, quantity: 3 },
      { key: 'key-reserve' },
    );
    const { id } = Reservation.parse(reserved.body);

    const released = await post(inventory.url, '/v1/releases', { reservationId: id }, { key: 'key-release' });
    const releaseReplay = await post(inventory.url, '/v1/releases', { reservationId: id }, { key: 'key-release' });
    const releaseAgain = await post(inventory.url, '/v1/releases', { reservationId: id }, { key: 'key-release-2' });
    const unknown = await post(inventory.url, '/v1/releases', { reservationId: 'rsv_404' }, { key: 'key-release-3' });

    assert.deepEqual(
      [reserved.status, replayed.status, reused.status, released.status, releaseReplay.status],
      [201, 200, 409, 201, 200],
    );
    assert.equal(Release.parse(released.body).status, 'released');
    assert.deepEqual([releaseAgain.status, errorOf(releaseAgain).code], [422, 'reservation_already_released']);
    assert.deepEqual([unknown.status, errorOf(unknown).code], [404, 'reservation_not_found']);

    const ledger = await inventory.ledger();
    assert.equal(ledger.records.reservations.length, 1);
    assert.equal(ledger.records.reservations[0].status, 'released');
    assert.equal(ledger.records.releases.length, 1);
    assert.deepEqual(ledger.counts['releases.create'], {
      committed: 1,
      replayed: 1,
      rejected: 2,
      conflict: 0,
      invalid: 0,
      faulted: 0,
    });
    const byKey = listOf(Reservation).parse(
      (await get(inventory.url, '/v1/reservations?idempotencyKey=key-reserve')).body,
    );
    assert.deepEqual(
      byKey.data.map((r) => r.id),
      [id],
    );
  });

  it('declines a reservation as out_of_stock without reserving', async () => {
    await inventory.setFaults([{ op: 'reservations.create', kind: 'decline' }]);
    const res = await post(
      inventory.url,
      '/v1/reservations',
      { sku: 's', quantity: 1, orderId: 'o' },
      { key: 'key-oos' },
    );
    assert.deepEqual([res.status, errorOf(res).code], [422, 'out_of_stock']);
    assert.equal((await inventory.ledger()).records.reservations.length, 0);
  });
});
