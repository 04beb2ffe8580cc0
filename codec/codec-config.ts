import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, type PayloadKeys } from './aes-gcm-codec';
import { invalidConfigError } from '../policies/errors';

/**
 * Payload encryption settings, read the same way by workers, clients, the ops CLI and the codec server:
 *
 *   RETRYSAFE_PAYLOAD_KEYS_FILE  path of a JSON key file
 *   RETRYSAFE_PAYLOAD_KEYS       the same JSON inline
 *
 *   { "activeKeyId": "k2", "keys": { "k1": "<base64 of 32 bytes>", "k2": "<base64 of 32 bytes>" } }
 *
 * Neither set (or set to the empty string): no codec, payloads stay plain. Both set: a configuration error, so two
 * processes can never disagree about which one counts. Errors name the variable and the field, never key material.
 */
export const PAYLOAD_KEYS_FILE_ENV = 'RETRYSAFE_PAYLOAD_KEYS_FILE';
/** The variable holding the payload keys inline as JSON (the file form, RETRYSAFE_PAYLOAD_KEYS_FILE, is preferred). */
export const PAYLOAD_KEYS_ENV = 'RETRYSAFE_PAYLOAD_KEYS';

/** The payload key setting is invalid or unreadable; the message names the variable or file. A worker exits 2 on it. */
export const PayloadKeysError = invalidConfigError('PayloadKeysError');

/** The JSON form of a key set, as the key file and RETRYSAFE_PAYLOAD_KEYS hold it. */
export interface PayloadKeysJson {
  activeKeyId: string;
  keys: Record<string, string>;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64_32_BYTES = /^[A-Za-z0-9+/]{43}=$/;

/** Validates a key set's JSON text; `source` prefixes every message (the variable, and the file when there is one). */
export function parsePayloadKeys(text: string, source: string): PayloadKeys {
  const fail = (problem: string): never => {
    throw new PayloadKeysError(`${source}: ${problem}`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the input, which may be key material.
    fail('is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail('must be a JSON object { "activeKeyId": "...", "keys": { "<id>": "<base64 of 32 bytes>" } }');
  }
  const obj = raw as Record<string, unknown>;
  for (const field of Object.keys(obj)) {
    if (field !== 'activeKeyId' && field !== 'keys') fail(`unknown field ${JSON.stringify(field.slice(0, 40))}`);
  }
  if (typeof obj.keys !== 'object' || obj.keys === null || Array.isArray(obj.keys)) {
    return fail('keys: must be an object of key ID → base64 of 32 bytes');
  }
  const entries = Object.entries(obj.keys as Record<string, unknown>);
  if (entries.length === 0) fail('keys: must hold at least one key');
  const keys = new Map<string, Uint8Array>();
  entries.forEach(([id, value], index) => {
    // An ID that is not one is not echoed: it could be a key pasted into the wrong place.
    if (!KEY_ID.test(id)) fail(`keys: key ID number ${index + 1} must be 1-64 of A-Z a-z 0-9 . _ -`);
    if (typeof value !== 'string' || !BASE64_32_BYTES.test(value)) fail(`keys.${id}: must be 32 bytes of base64`);
    const bytes = Buffer.from(value as string, 'base64');
    if (bytes.length !== 32) fail(`keys.${id}: must be 32 bytes of base64`);
    keys.set(id, bytes);
  });
  if (typeof obj.activeKeyId !== 'string' || obj.activeKeyId === '') {
    return fail('activeKeyId: must be a string naming one of keys');
  }
  if (!keys.has(obj.activeKeyId)) {
    const shown = KEY_ID.test(obj.activeKeyId) ? `${JSON.stringify(obj.activeKeyId)} ` : '';
    fail(`activeKeyId: ${shown}is not one of keys (${[...keys.keys()].join(', ')})`);
  }
  return { activeKeyId: obj.activeKeyId, keys };
}

/** The key set the environment names, or undefined when encryption is off. */
export function loadPayloadKeys(env: NodeJS.ProcessEnv = process.env): PayloadKeys | undefined {
  const file = env[PAYLOAD_KEYS_FILE_ENV] || undefined;
  const inline = env[PAYLOAD_KEYS_ENV] || undefined;
  if (file !== undefined && inline !== undefined) {
    throw new PayloadKeysError(`set ${PAYLOAD_KEYS_FILE_ENV} or ${PAYLOAD_KEYS_ENV}, not both`);
  }
  if (inline !== undefined) return parsePayloadKeys(inline, PAYLOAD_KEYS_ENV);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PayloadKeysError(
      `${PAYLOAD_KEYS_FILE_ENV}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  return parsePayloadKeys(text, `${PAYLOAD_KEYS_FILE_ENV} (${file})`);
}

/** The codec the environment configures, or undefined when encryption is off. */
export function payloadCodecFromEnv(env: NodeJS.ProcessEnv = process.env): AesGcmPayloadCodec | undefined {
  const keys = loadPayloadKeys(env);
  return keys ? new AesGcmPayloadCodec(keys) : undefined;
}

/**
 * The data converter for `new Client({ dataConverter })` and `Worker.create({ dataConverter })`, or undefined when
 * encryption is off (the SDK's default then). Only payload codecs: they run in the worker's main thread and in
 * clients, never in the workflow sandbox.
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const codec = payloadCodecFromEnv(env);
  return codec ? { payloadCodecs: [codec] } : undefined;
}

/** The environment that points a process at one key file (and clears the inline form it might inherit). */
export function payloadKeysFileEnv(file: string): Record<string, string> {
  return { [PAYLOAD_KEYS_FILE_ENV]: file, [PAYLOAD_KEYS_ENV]: '' };
}

/** A fresh key set with one key, in its JSON form. */
export function generatePayloadKeys(keyId = 'k1'): PayloadKeysJson {
  return { activeKeyId: keyId, keys: { [keyId]: randomBytes(32).toString('base64') } };
}

/**
 * Writes a key file with one fresh key (mode 0600, its folder created) unless the file exists; an existing file is
 * validated and left as it is. Idempotent, also against a concurrent first start: the file is written aside and
 * linked into place, so no reader ever sees it half-written and only one key set wins.
 */
export async function generatePayloadKeysFile(
  file: string,
  opts: { keyId?: string } = {},
): Promise<{ path: string; created: boolean }> {
  const target = path.resolve(file);
  await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const aside = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  let created = true;
  try {
    await writeFile(aside, `${JSON.stringify(generatePayloadKeys(opts.keyId), null, 2)}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    await link(aside, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    created = false;
  } finally {
    await rm(aside, { force: true });
  }
  if (!created) loadPayloadKeys({ [PAYLOAD_KEYS_FILE_ENV]: target });
  return { path: target, created };
}
