import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exampleRegistry } from '../../examples/tools';
import { shipmentRefFor } from '../../examples/tools/references';
import { containsCardNumber } from '../../policies/card-numbers';
import { requestHash } from '../../policies/request-hash';

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

describe('the hashed shipment reference never reads as a card number', () => {
  it('writes a hash holding a long digit run in dot-joined groups, and leaves every other hash as it was', () => {
    const tenant = 'peers-dbos';
    const dotted = (hex: string) => `${hex.slice(0, 8)}.${hex.slice(8, 16)}.${hex.slice(16)}-ship`;
    let card: string | undefined;
    let unchanged = 0;
    for (let i = 0; i < 20_000 && !card; i++) {
      const orderId = `O-${i}`;
      const hex = requestHash([tenant, orderId]).slice(0, 24);
      const long = /\d{13}/.test(hex);
      assert.equal(shipmentRefFor(tenant, orderId), long ? dotted(hex) : `${hex}-ship`, orderId);
      if (!long) unchanged++;
      if (containsCardNumber(`${hex}-ship`)) card = orderId;
    }
    assert.ok(card, 'some order ID hashes to what reads as a card number');
    assert.ok(unchanged > 0);
    const hex = requestHash([tenant, card]).slice(0, 24);
    // The form before: an intent carrying it was refused.
    assert.throws(
      () => tools.parseIntent({ operation: 'create-shipment', shipmentRef: `${hex}-ship`, orderId: card, address }),
      /looks like a card number/,
    );
    const shipmentRef = shipmentRefFor(tenant, card);
    assert.equal(containsCardNumber(shipmentRef), false, shipmentRef);
    const intent = tools.parseIntent({ operation: 'create-shipment', shipmentRef, orderId: card, address });
    assert.equal(intent.shipmentRef, shipmentRef);
  });
});
