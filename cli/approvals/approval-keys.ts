import { ed25519 } from '../../policies/ed25519';
import { bytesToHex } from '@noble/hashes/utils';
import { approvalKeyId, approvalPublicKey } from '../../policies/signed-decision';

/** A fresh approval signing key pair (hex) and its default key id. Lives here because it draws randomness. */
export function generateApprovalKeyPair(): { privateKeyHex: string; publicKeyHex: string; keyId: string } {
  const privateKeyHex = bytesToHex(ed25519.utils.randomSecretKey());
  const publicKeyHex = approvalPublicKey(privateKeyHex);
  return { privateKeyHex, publicKeyHex, keyId: approvalKeyId(publicKeyHex) };
}
