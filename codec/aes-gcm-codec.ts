import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/**
 * Payloads encrypted at rest with AES-256-GCM: a Temporal PayloadCodec for workers and clients (never for workflow
 * code: it needs node:crypto and runs outside the workflow sandbox).
 *
 * Wire format of an encrypted payload:
 *
 *   metadata  encoding           = "binary/encrypted"
 *             encryption-key-id  = the key's ID, e.g. "k2" (UTF-8)
 *   data      iv (12 random bytes) ‖ ciphertext ‖ GCM tag (16 bytes)
 *
 * The plaintext is the whole original payload in its protobuf form (temporal.api.common.v1.Payload), so its
 * metadata (the `json/plain` encoding, any message type) is hidden with its data. Each payload gets a fresh IV.
 *
 * Keys rotate by ID: encode always uses the active key; decode uses whichever known key the payload names, so a
 * history written under k1 still reads after k2 became active, as long as k1 stays in the key set. A payload that
 * names an unknown key, or whose tag does not verify (tampered, truncated, or encrypted under another key that was
 * given the same ID), fails with a PayloadCodecError; it never decodes to garbage. The key ID is not authenticated
 * and need not be: a changed ID selects another key, and the tag then fails. Payloads without the
 * `binary/encrypted` encoding pass through decode unchanged, so histories recorded before encryption still read.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The codec's keys: the active one and every key still needed to read older payloads. */
export interface PayloadKeys {
  /** The key new payloads are encrypted with. */
  activeKeyId: string;
  /** Every key that may still have to decrypt a stored payload, by ID; each exactly 32 bytes. */
  keys: ReadonlyMap<string, Uint8Array>;
}

/** A payload cannot be decrypted: unknown key id, or the ciphertext fails authentication. */
export class PayloadCodecError extends Error {
  override name = 'PayloadCodecError';
}

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

/**
 * A Temporal payload codec that encrypts every payload with AES-256-GCM under the active key and decrypts with any
 * known key, so keys can rotate. Payloads it did not encrypt pass through.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly activeKeyId: string;

  constructor(keys: PayloadKeys) {
    const copied = new Map<string, Buffer>();
    for (const [id, key] of keys.keys) {
      if (!KEY_ID.test(id))
        throw new PayloadCodecError(`key ID ${JSON.stringify(id)}: must be 1-64 of A-Z a-z 0-9 . _ -`);
      if (key.length !== KEY_BYTES) throw new PayloadCodecError(`key ${id}: must be ${KEY_BYTES} bytes`);
      copied.set(id, Buffer.from(key));
    }
    if (!copied.has(keys.activeKeyId)) {
      throw new PayloadCodecError(`activeKeyId ${JSON.stringify(keys.activeKeyId)}: is not among the keys`);
    }
    this.keys = copied;
    this.activeKeyId = keys.activeKeyId;
  }

  /** Key IDs only, never key material: for messages and diagnostics. */
  get keyIds(): { active: string; known: string[] } {
    return { active: this.activeKeyId, known: [...this.keys.keys()] };
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.keys.get(this.activeKeyId)!;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
          [METADATA_KEY_ID]: Buffer.from(this.activeKeyId),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  private decodeOne(payload: Payload): Payload {
    if (utf8(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
    const keyId = utf8(payload.metadata?.[METADATA_KEY_ID]);
    if (keyId === undefined) {
      throw new PayloadCodecError(`encrypted payload has no ${METADATA_KEY_ID} in its metadata`);
    }
    const key = this.keys.get(keyId);
    if (key === undefined) {
      throw new PayloadCodecError(
        `payload is encrypted with key ${JSON.stringify(keyId)}, which is not among the known payload keys ` +
          `(${[...this.keys.keys()].join(', ')}); add it to the key set to read this payload`,
      );
    }
    const data = Buffer.from(payload.data ?? []);
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadCodecError(`payload encrypted with key ${JSON.stringify(keyId)} is truncated`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadCodecError(
        `payload encrypted with key ${JSON.stringify(keyId)} failed authentication: it was altered, or encrypted ` +
          'under another key of the same ID',
      );
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
