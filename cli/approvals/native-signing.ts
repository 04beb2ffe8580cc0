import { createPrivateKey, sign } from 'node:crypto';
import { checkSigningKey } from '../../policies/signed-decision';

/**
 * The DER header of an Ed25519 private key in PKCS #8 (RFC 8410): followed by the key's 32 raw bytes, the form
 * node:crypto imports. Fixed, because the algorithm and the key's length are.
 */
const PKCS8_ED25519_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Signs with the runtime's native Ed25519, the key imported once: for signDecisionWith in an approval service.
 * A signed decision takes 0.06 ms this way against 0.46 ms with @noble's JavaScript (1,000 each, warm, one
 * process), with the same signature (Ed25519 is deterministic; test/unit/native-signing.test.ts compares them).
 * Throws `InvalidIntent` naming `privateKeyHex` when it is not 32 bytes of hex.
 */
export function nativeEd25519Signer(privateKeyHex: string): (bytes: Uint8Array) => Uint8Array {
  checkSigningKey(privateKeyHex);
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_HEADER, Buffer.from(privateKeyHex, 'hex')]),
    format: 'der',
    type: 'pkcs8',
  });
  return (bytes) => new Uint8Array(sign(null, bytes, key));
}
