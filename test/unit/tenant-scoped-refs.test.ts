import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exampleRegistry } from '../../examples/tools';
import { shipmentRefFor } from '../../examples/tools/references';

const tools = exampleRegistry();
const address = { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' };

describe('the renewal shipment reference is tenant-scoped', () => {
  it('includes the tenant, readably when it can', () => {
    assert.equal(shipmentRefFor('acme', 'A-1842'), 'acme-A-1842-ship');
    assert.notEqual(shipmentRefFor('acme', 'A-1842'), shipmentRefFor('globex', 'A-1842'));
  });

  it('never gives two tenant/order pairs the same reference, even when names contain "-"', () => {
    const pairs: Array<[string, string]> = [
      ['acme', 'eu-1'],
      ['acme-eu', '1'],
      ['acme', 'eu-1-ship'],
      ['acme-eu-1', 'ship'],
      ['a', 'b-c'],
      ['a-b', 'c'],
      ['acme.eu', '1'],
      ['acme', '1'],
    ];
    const refs = pairs.map(([t, o]) => shipmentRefFor(t, o));
    assert.equal(new Set(refs).size, pairs.length, refs.join(', '));
    // Deterministic: workflow code computes it on every replay.
    assert.deepEqual(
      pairs.map(([t, o]) => shipmentRefFor(t, o)),
      refs,
    );
  });

  it('stays a valid shipment identifier for the longest tenant and order ID', () => {
    const cases: Array<[string, string]> = [
      ['t'.repeat(80), 'o'.repeat(100)],
      ['acme', 'o'.repeat(100)],
      ['acme-eu', 'A-1842'],
      ['acme', 'A-1842'],
    ];
    for (const [tenant, orderId] of cases) {
      const shipmentRef = shipmentRefFor(tenant, orderId);
      assert.ok(shipmentRef.length <= 100, shipmentRef);
      const intent = tools.parseIntent({ operation: 'create-shipment', shipmentRef, orderId, address });
      assert.equal(intent.shipmentRef, shipmentRef);
      assert.equal(tools.reference(intent, 'create-shipment:v1:x:y'), shipmentRef);
    }
  });
});
