import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { RetrysafeError } from './errors';

/**
 * Canonical JSON: object keys sorted by code point, strings and keys in Unicode NFC, -0 written as 0,
 * no whitespace. Only plain JSON data is accepted; anything whose JSON form is ambiguous or lossy
 * (undefined, NaN, Infinity, bigint, Date, Map, class instances, functions) is refused with the path
 * of the offending value, because two callers must never hash "the same" request differently.
 *
 * Hashing uses @noble/hashes (pure JS) so workflow code, which may not touch node:crypto, computes
 * the same digest as activities and clients.
 */
export function canonicalJson(value: unknown, omitTopLevel: readonly string[] = []): string {
  return write(value, '$', new Set(omitTopLevel), true, 0);
}

/** Deeper than this a value is refused, so the recursion below stays far from any stack limit. */
export const MAX_HASHED_DEPTH = 128;

function write(value: unknown, path: string, omit: ReadonlySet<string>, top: boolean, depth: number): string {
  if (value === null) return 'null';
  if (depth > MAX_HASHED_DEPTH) throw unhashable(path, `it nests deeper than ${MAX_HASHED_DEPTH} levels`);
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.normalize('NFC'));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw unhashable(path, `${value} is not a finite number`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object':
      break;
    default:
      throw unhashable(path, `a ${typeof value} has no canonical JSON form`);
  }
  if (Array.isArray(value)) {
    return `[${Array.from(value, (item, i) => write(item, `${path}[${i}]`, omit, false, depth + 1)).join(',')}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw unhashable(
      path,
      `${(proto as { constructor?: { name?: string } }).constructor?.name ?? 'object'} is not plain JSON data`,
    );
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([k]) => !(top && omit.has(k)))
    .map(([k, v]) => [k.normalize('NFC'), v, k] as const);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 1; i < entries.length; i++) {
    if (entries[i][0] === entries[i - 1][0])
      throw unhashable(`${path}.${entries[i][2]}`, 'two keys are equal after NFC normalization');
  }
  const body = entries.map(([k, v, raw]) => {
    if (v === undefined) throw unhashable(`${path}.${raw}`, 'undefined has no JSON form; omit the key instead');
    return `${JSON.stringify(k)}:${write(v, `${path}.${raw}`, omit, false, depth + 1)}`;
  });
  return `{${body.join(',')}}`;
}

function unhashable(path: string, reason: string): RetrysafeError {
  return new RetrysafeError('UnhashableValue', `cannot hash ${path}: ${reason}`, { field: path });
}

/** SHA-256 (hex) of the canonical JSON of a normalized intent, without its secret top-level fields. */
export function requestHash(intent: unknown, secretFields: readonly string[] = []): string {
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(intent, secretFields))));
}

/** A short prefix for logs and UI; the full hash is what is compared. */
export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}
