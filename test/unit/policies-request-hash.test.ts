import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, requestHash, shortHash } from '../../policies/request-hash';
import { RetrysafeError } from '../../policies/errors';

function assertUnhashable(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, 'UnhashableValue');
    assert.equal(err.details.field, field);
    return true;
  });
}

const sha256Hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const NFC_E = '\u00e9'; // é as one code point
const NFD_E = 'e\u0301'; // e + combining acute accent

describe('requestHash', () => {
  it('is 64 lowercase hex characters', () => {
    assert.match(requestHash({ a: 1 }), /^[0-9a-f]{64}$/);
  });

  it('matches an independent SHA-256 of the canonical JSON (known-answer vector)', () => {
    const value = { b: 1, a: [true, null, `caf${NFD_E}`], c: { y: -0, x: 'z', w: 1.5 } };
    const expectedCanonical = `{"a":[true,null,"caf${NFC_E}"],"b":1,"c":{"w":1.5,"x":"z","y":0}}`;
    assert.equal(canonicalJson(value), expectedCanonical);
    assert.equal(requestHash(value), sha256Hex(expectedCanonical));
  });

  it('matches an independent SHA-256 for a normalized charge intent', () => {
    const intent = {
      operation: 'charge',
      amountCents: 4990,
      currency: 'usd',
      customerId: 'cus_1',
      paymentMethod: 'pm_1',
      merchantReference: 'A-1842',
    };
    const canonical =
      '{"amountCents":4990,"currency":"usd","customerId":"cus_1","merchantReference":"A-1842","operation":"charge","paymentMethod":"pm_1"}';
    assert.equal(requestHash(intent), sha256Hex(canonical));
  });

  it('is stable across key order, at every depth', () => {
    const a = { x: 1, y: { p: [1, { m: 'a', n: 'b' }], q: null }, z: 'z' };
    const b = { z: 'z', y: { q: null, p: [1, { n: 'b', m: 'a' }] }, x: 1 };
    assert.equal(requestHash(a), requestHash(b));
  });

  it('hashes NFC and NFD spellings of a string the same', () => {
    assert.notEqual(`caf${NFC_E}`, `caf${NFD_E}`);
    assert.equal(requestHash({ name: `caf${NFC_E}` }), requestHash({ name: `caf${NFD_E}` }));
    assert.equal(requestHash([`caf${NFD_E}`]), requestHash([`caf${NFC_E}`]));
  });

  it('hashes NFC and NFD spellings of an object key the same', () => {
    assert.equal(requestHash({ [`caf${NFC_E}`]: 1 }), requestHash({ [`caf${NFD_E}`]: 1 }));
  });

  it('refuses an object whose keys collide after NFC normalization', () => {
    assertUnhashable(() => requestHash({ nested: { [`caf${NFC_E}`]: 1, [`caf${NFD_E}`]: 2 } }), `$.nested.caf${NFD_E}`);
  });

  it('hashes -0 and 0 the same', () => {
    assert.equal(requestHash({ n: -0 }), requestHash({ n: 0 }));
    assert.equal(canonicalJson(-0), '0');
  });

  it('gives different hashes for different amounts', () => {
    assert.notEqual(requestHash({ amountCents: 4990 }), requestHash({ amountCents: 4991 }));
  });

  it('distinguishes a number from its string form, and true from "true"', () => {
    assert.notEqual(requestHash({ n: 1 }), requestHash({ n: '1' }));
    assert.notEqual(requestHash({ b: true }), requestHash({ b: 'true' }));
    assert.notEqual(requestHash({ v: null }), requestHash({}));
  });

  it('is sensitive to array order', () => {
    assert.notEqual(requestHash({ items: [1, 2] }), requestHash({ items: [2, 1] }));
  });

  it('treats a null-prototype object like a plain object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    assert.equal(requestHash(bare), requestHash({ a: 1, b: 2 }));
  });

  it('accepts top-level scalars, null and empty containers', () => {
    assert.equal(canonicalJson(null), 'null');
    assert.equal(canonicalJson('x'), '"x"');
    assert.equal(canonicalJson(false), 'false');
    assert.equal(canonicalJson([]), '[]');
    assert.equal(canonicalJson({}), '{}');
  });

  it('escapes strings exactly as JSON does', () => {
    assert.equal(canonicalJson({ s: 'a"b\\c\n' }), '{"s":"a\\"b\\\\c\\n"}');
  });

  describe('secret fields', () => {
    it('leaves named top-level fields out of the hash', () => {
      const a = requestHash({ to: 'x', apiKey: 'secret-1' }, ['apiKey']);
      const b = requestHash({ to: 'x', apiKey: 'secret-2' }, ['apiKey']);
      assert.equal(a, b);
      assert.equal(a, requestHash({ to: 'x' }));
    });

    it('still hashes the field when it is not declared secret', () => {
      assert.notEqual(requestHash({ to: 'x', apiKey: 'secret-1' }), requestHash({ to: 'x', apiKey: 'secret-2' }));
    });

    it('omits only top-level fields, not nested ones with the same name', () => {
      assert.notEqual(
        requestHash({ nested: { apiKey: 'secret-1' } }, ['apiKey']),
        requestHash({ nested: { apiKey: 'secret-2' } }, ['apiKey']),
      );
    });

    it('still differs when a non-secret field differs', () => {
      assert.notEqual(
        requestHash({ to: 'x', apiKey: 's' }, ['apiKey']),
        requestHash({ to: 'y', apiKey: 's' }, ['apiKey']),
      );
    });
  });

  describe('refuses values without one canonical JSON form, naming their path', () => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const cases: Array<[string, unknown, string]> = [
      ['undefined as a property value', { a: { b: undefined } }, '$.a.b'],
      ['undefined as an array item', { list: [1, undefined] }, '$.list[1]'],
      ['a hole in a sparse array', { list: [1, , 3] }, '$.list[1]'], // eslint-disable-line no-sparse-arrays
      ['undefined at the top', undefined, '$'],
      ['NaN', { amount: Number.NaN }, '$.amount'],
      ['Infinity', { amount: Number.POSITIVE_INFINITY }, '$.amount'],
      ['-Infinity', { a: [{ b: Number.NEGATIVE_INFINITY }] }, '$.a[0].b'],
      ['a bigint', { amount: 10n }, '$.amount'],
      ['a Date', { at: new Date(0) }, '$.at'],
      ['a Map', { m: new Map([['a', 1]]) }, '$.m'],
      ['a Set', { s: new Set([1]) }, '$.s'],
      ['a class instance', { price: new Money(4990) }, '$.price'],
      ['a function', { f: () => 1 }, '$.f'],
      ['a symbol', { s: Symbol('x') }, '$.s'],
      ['a boxed string', { s: new String('x') }, '$.s'],
    ];
    for (const [label, value, field] of cases) {
      it(`refuses ${label} at ${field}`, () => {
        assertUnhashable(() => requestHash(value), field);
        assertUnhashable(() => canonicalJson(value), field);
      });
    }

    it('refuses an undefined even when it hides under a secret name below the top level', () => {
      assertUnhashable(() => requestHash({ nested: { apiKey: undefined } }, ['apiKey']), '$.nested.apiKey');
    });

    it('does not look at a top-level secret field at all', () => {
      assert.equal(requestHash({ a: 1, apiKey: undefined }, ['apiKey']), requestHash({ a: 1 }));
    });
  });

  it('refusals say what is wrong', () => {
    try {
      requestHash({ at: new Date(0) });
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.match(err.message, /\$\.at/);
      assert.match(err.message, /Date/);
    }
  });
});

describe('shortHash', () => {
  it('is the first 12 characters of the hash', () => {
    const h = requestHash({ a: 1 });
    assert.equal(shortHash(h), h.slice(0, 12));
    assert.equal(shortHash(h).length, 12);
  });
});
