import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sha512 } from '@noble/hashes/sha2';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { ed25519, verifyStrict } from '../../policies/ed25519';

/** @noble's own strict verification: what verifyStrict must answer, call for call. */
const reference = (sigHex: string, message: Uint8Array, keyHex: string) => {
  try {
    return ed25519.verify(sigHex, message, keyHex, { zip215: false });
  } catch {
    return false;
  }
};

/** Curve order n, little-endian: s + n is the classic non-canonical signature scalar. */
const N = 2n ** 252n + 27742317777372353535851937790883648493n;
const toLe32 = (x: bigint) => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((x >> BigInt(8 * i)) & 0xffn);
  return out;
};
const fromLe = (b: Uint8Array) => b.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);

function keyPair() {
  const secret = randomBytes(32);
  return { secret, publicHex: bytesToHex(ed25519.getPublicKey(secret)) };
}

describe('verifyStrict: RFC 8032 verification with each key decoded once', () => {
  it('accepts the RFC 8032 test vectors (section 7.1, tests 1 and 2)', () => {
    const vectors = [
      {
        secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
        publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
        message: '',
        signature:
          'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
      },
      {
        secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
        publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
        message: '72',
        signature:
          '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
      },
    ];
    for (const v of vectors) {
      assert.equal(bytesToHex(ed25519.getPublicKey(v.secret)), v.publicKey);
      assert.equal(bytesToHex(ed25519.sign(hexToBytes(v.message), v.secret)), v.signature);
      assert.equal(verifyStrict(v.signature, hexToBytes(v.message), v.publicKey), true);
      // The same key again, now from the cache, refuses another message.
      assert.equal(verifyStrict(v.signature, hexToBytes('00'), v.publicKey), false);
    }
  });

  it('answers as @noble strict verify does for valid and tampered signatures, messages and keys', () => {
    const pairs = Array.from({ length: 6 }, keyPair);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      const { secret, publicHex } = pairs[i % pairs.length];
      const message = randomBytes(1 + (i % 300));
      const signature = ed25519.sign(message, secret);
      const cases: Array<[string, Uint8Array, string]> = [[bytesToHex(signature), message, publicHex]];
      const flipped = Uint8Array.from(signature);
      flipped[i % 64] ^= 1 << (i % 8);
      cases.push([bytesToHex(flipped), message, publicHex]);
      const otherMessage = Uint8Array.from(message);
      otherMessage[i % message.length] ^= 0x80;
      cases.push([bytesToHex(signature), otherMessage, publicHex]);
      cases.push([bytesToHex(signature), message, pairs[(i + 1) % pairs.length].publicHex]);
      for (const [sig, msg, key] of cases) {
        const expected = reference(sig, msg, key);
        assert.equal(
          verifyStrict(sig, msg, key),
          expected,
          `case ${i}: ${sig.slice(0, 16)}… under ${key.slice(0, 16)}…`,
        );
        if (expected) accepted++;
        else refused++;
      }
    }
    assert.equal(accepted, 120);
    assert.equal(refused, 360);
  });

  it('refuses a non-canonical s (s + n), which a lenient verifier would take', () => {
    const { secret, publicHex } = keyPair();
    const message = randomBytes(40);
    const signature = ed25519.sign(message, secret);
    const s = fromLe(signature.subarray(32));
    const malleated = Uint8Array.from([...signature.subarray(0, 32), ...toLe32(s + N)]);
    assert.equal(verifyStrict(bytesToHex(signature), message, publicHex), true);
    assert.equal(verifyStrict(bytesToHex(malleated), message, publicHex), false);
    assert.equal(reference(bytesToHex(malleated), message, publicHex), false);
  });

  it('refuses keys of small order, non-canonical or malformed keys, and malformed signatures, without throwing', () => {
    const { secret, publicHex } = keyPair();
    const message = randomBytes(32);
    const sig = bytesToHex(ed25519.sign(message, secret));
    const identity = '01' + '00'.repeat(31);
    const yIsP = 'ed' + 'ff'.repeat(30) + '7f'; // y = 2^255 - 19: only a lenient decoder reads it
    for (const key of [identity, yIsP, '', 'zz'.repeat(32), publicHex.slice(0, 62), publicHex + '00']) {
      assert.equal(verifyStrict(sig, message, key), false, `key ${key || '(empty)'}`);
      assert.equal(reference(sig, message, key), false);
    }
    for (const bad of ['', sig.slice(0, 126), sig + '00', 'g'.repeat(128)]) {
      assert.equal(verifyStrict(bad, message, publicHex), false, `signature ${bad.slice(0, 8) || '(empty)'}`);
    }
    // Under the identity key, R = sB with any s satisfies the group equation: ZIP 215 takes it, RFC 8032 must not.
    const s = 12345n;
    const forged = bytesToHex(Uint8Array.from([...ed25519.Point.BASE.multiply(s).toBytes(), ...toLe32(s)]));
    assert.equal(ed25519.verify(forged, message, identity, { zip215: true }), true);
    assert.equal(verifyStrict(forged, message, identity), false);
    // A refused key is remembered as refused, not as a key that verifies everything.
    assert.equal(verifyStrict(forged, message, identity), false);
    // Upper-case hex is the same key.
    assert.equal(verifyStrict(sig.toUpperCase(), message, publicHex.toUpperCase()), true);
  });

  it('decodes R as strictly as @noble: a non-canonical R is refused, a mixed-order R or key is taken as @noble takes it', () => {
    const { Point } = ed25519;
    const a = 0x1234567890abcdefn;
    const A = Point.BASE.multiply(a);
    const keyHex = bytesToHex(A.toBytes());
    const message = new TextEncoder().encode('approve');
    const k = (R: Uint8Array, key: Uint8Array) =>
      Point.Fn.create(fromLe(sha512(Uint8Array.from([...R, ...key, ...message]))));
    const sig = (R: Uint8Array, s: bigint) => bytesToHex(Uint8Array.from([...R, ...toLe32(s)]));

    // R = the identity, s = k·a: valid. Its two non-canonical encodings (y = p + 1; x's sign bit set on x = 0) decode
    // to the same point for a lenient reader, which would then accept them; RFC 8032 refuses both.
    const identity = Point.ZERO.toBytes();
    const s0 = Point.Fn.create(k(identity, A.toBytes()) * a);
    assert.equal(verifyStrict(sig(identity, s0), message, keyHex), true);
    for (const R of ['ee' + 'ff'.repeat(30) + '7f', '01' + '00'.repeat(30) + '80']) {
      const forged = R + sig(identity, s0).slice(64);
      assert.equal(ed25519.verify(forged, message, keyHex, { zip215: true }), true, 'a lenient reader takes it');
      assert.equal(reference(forged, message, keyHex), false);
      assert.equal(verifyStrict(forged, message, keyHex), false, `R ${R.slice(0, 8)}…`);
    }

    // A point of order 8 added to R (or to the key) vanishes in the cofactored equation, [8]: both accept.
    const T = Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
    assert.ok(T.multiplyUnsafe(8n).is0() && !T.multiplyUnsafe(4n).is0(), 'T has order 8');
    const r = 0xfedcba9876543210n;
    const R = Point.BASE.multiply(r).add(T).toBytes();
    const mixedR = sig(R, Point.Fn.create(r + k(R, A.toBytes()) * a));
    assert.equal(reference(mixedR, message, keyHex), true);
    assert.equal(verifyStrict(mixedR, message, keyHex), true);
    const mixedKey = A.add(T).toBytes();
    const Rk = Point.BASE.multiply(r).toBytes();
    const underMixedKey = sig(Rk, Point.Fn.create(r + k(Rk, mixedKey) * a));
    assert.equal(reference(underMixedKey, message, bytesToHex(mixedKey)), true);
    assert.equal(verifyStrict(underMixedKey, message, bytesToHex(mixedKey)), true);
  });

  it('verifies correctly under many different keys, one after another', () => {
    const message = randomBytes(16);
    for (let i = 0; i < 70; i++) {
      const { secret, publicHex } = keyPair();
      const sig = bytesToHex(ed25519.sign(message, secret));
      assert.equal(verifyStrict(sig, message, publicHex), true);
      assert.equal(verifyStrict(sig, randomBytes(16), publicHex), false);
    }
  });
});
