// An approval service of the team's own: it signs decisions with Node.js's Ed25519 through signDecisionWith, and
// workers trust the key's public half. Prints whether the signature is the one signDecision gives for the same key.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { approvalKeyId, decisionClaims, requestHash, signDecision, signDecisionWith } from 'retrysafe';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const hexOf = (b64url: string | undefined) => Buffer.from(b64url ?? '', 'base64url').toString('hex');
const privateKeyHex = hexOf(privateKey.export({ format: 'jwk' }).d);
const keyId = approvalKeyId(hexOf(publicKey.export({ format: 'jwk' }).x));
const claims = decisionClaims({
  decision: 'approve',
  key: 'post-message:v1:acme:launch-1',
  tenant: 'acme',
  requestHash: requestHash({ operation: 'post-message', text: 'We are live' }),
  operator: 'ops',
  nowMs: Date.now(),
  nonce: randomBytes(12).toString('hex'),
});
const native = signDecisionWith(claims, keyId, (bytes) => sign(null, bytes, privateKey));
const pure = signDecision(claims, privateKeyHex, keyId);
console.log(JSON.stringify({ keyId, same: native.signature === pure.signature && native.signature.length === 128 }));
