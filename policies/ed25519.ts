/**
 * The Ed25519 implementation that signed decisions are verified with, in a module of its own so that workers
 * can preload it into the workflow sandbox (workers/workflow-preload.ts). In a reusable V8 context every other
 * module is evaluated once per workflow, so each workflow built the curve's precomputed base-point table again on
 * its first verification: about 55 ms of every approval's workflow task on a 2-core machine, against 2–5 ms for
 * the verification itself once the table exists.
 *
 * The same holds for the signer's public key: an approval service signs with one key for months, and @noble's
 * `verify` decodes it and multiplies it without a table on every call (about 70 % of a verification). Here each
 * trusted key is decoded once per worker, checked, and given a small precomputed table; a verification then costs
 * about a third. The cache is pure (a key's point is a function of its bytes), so sharing it across workflows
 * cannot change a result.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { bytesToNumberLE, concatBytes, hexToBytes } from '@noble/curves/utils';
import { sha512 } from '@noble/hashes/sha2';

export { ed25519 };

type Point = ReturnType<typeof ed25519.Point.fromBytes>;

/**
 * Window of each trusted key's table: 4 costs about 7 ms once per key and worker on 2 cores and makes the key's
 * multiplication about 3× faster than none; 8 would take 35 ms to build for a few tenths of a millisecond more.
 */
const KEY_WINDOW = 4;
/** Workers trust a handful of keys; a cache this size is never cleared by rotation, and bounded if misused. */
const MAX_CACHED_KEYS = 64;
const SIGNATURE_BYTES = 64;
const KEY_BYTES = 32;

/** A trusted key decoded: its point with a table, and its canonical bytes; null when it can never verify. */
const decodedKeys = new Map<string, { point: Point; bytes: Uint8Array } | null>();

function decodedKey(publicKeyHex: string) {
  const cached = decodedKeys.get(publicKeyHex);
  if (cached !== undefined) return cached;
  let decoded: { point: Point; bytes: Uint8Array } | null = null;
  try {
    const bytes = hexToBytes(publicKeyHex);
    if (bytes.length === KEY_BYTES) {
      // Strict (RFC 8032) decoding, and no key of small order: what @noble's verify does with zip215 off.
      const point = ed25519.Point.fromBytes(bytes, false);
      if (!point.isSmallOrder()) decoded = { point: point.precompute(KEY_WINDOW, false), bytes: point.toBytes() };
    }
  } catch {
    decoded = null;
  }
  if (decodedKeys.size >= MAX_CACHED_KEYS) decodedKeys.clear();
  decodedKeys.set(publicKeyHex, decoded);
  return decoded;
}

/**
 * RFC 8032's strict verification of `signatureHex` over `message` under `publicKeyHex`: the same answer as
 * `ed25519.verify(signature, message, publicKey, { zip215: false })`, with the key's decoding and table kept for
 * the next call. False for anything malformed; never throws.
 */
export function verifyStrict(signatureHex: string, message: Uint8Array, publicKeyHex: string): boolean {
  try {
    const key = decodedKey(publicKeyHex.toLowerCase());
    if (!key) return false;
    const signature = hexToBytes(signatureHex);
    if (signature.length !== SIGNATURE_BYTES) return false;
    const { Point } = ed25519;
    const r = signature.subarray(0, SIGNATURE_BYTES / 2);
    const s = bytesToNumberLE(signature.subarray(SIGNATURE_BYTES / 2));
    if (!Point.Fn.isValid(s)) return false;
    const R = Point.fromBytes(r, false);
    const k = Point.Fn.create(bytesToNumberLE(sha512(concatBytes(R.toBytes(), key.bytes, message))));
    // [8][S]B = [8]R + [8][k]A
    return R.add(key.point.multiplyUnsafe(k)).subtract(Point.BASE.multiplyUnsafe(s)).clearCofactor().is0();
  } catch {
    return false;
  }
}
