/**
 * The Ed25519 implementation that signed decisions are verified with: @noble/curves' strict (RFC 8032) verify,
 * with no curve arithmetic of ours. It is a module of its own so that workers can preload it into the workflow
 * sandbox (workers/workflow-preload.ts): in a reusable V8 context every other module is evaluated once per
 * workflow, so each workflow would build the curve's precomputed base-point table again on its first
 * verification. Preloaded, the table is built once per worker and shared; it is a pure cache, so sharing it
 * cannot change a result.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { hexToBytes } from '@noble/curves/utils';

export { ed25519 };

/**
 * RFC 8032's strict verification of `signatureHex` over `message` under `publicKeyHex`:
 * `ed25519.verify(signature, message, publicKey, { zip215: false })` (canonical encodings only, no key of small
 * order). False for anything malformed; never throws.
 */
export function verifyStrict(signatureHex: string, message: Uint8Array, publicKeyHex: string): boolean {
  try {
    return ed25519.verify(hexToBytes(signatureHex), message, hexToBytes(publicKeyHex), { zip215: false });
  } catch {
    return false;
  }
}
