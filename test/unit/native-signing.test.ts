import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { nativeEd25519Signer } from '../../cli/approvals/native-signing';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { decisionClaims, signDecision, signDecisionWith, verifyDecision } from '../../policies/signed-decision';
import { errorCodeOf, errorDetailsOf } from '../../policies/errors';
import { requestHash } from '../../policies/request-hash';

const NOW = Date.parse('2026-12-04T10:00:00.000Z');

const claimsFor = (i: number) =>
  decisionClaims({
    decision: i % 3 === 0 ? 'reject' : 'approve',
    key: `charge:v1:acme:native-${i}`,
    tenant: 'acme',
    requestHash: requestHash({ operation: 'charge', amountCents: 100 + i }),
    operator: `operator-${i % 7}`,
    nowMs: NOW + i,
    nonce: randomBytes(12).toString('hex'),
  });

describe('the approval service signs with the runtime’s native Ed25519', () => {
  it('gives the bytes @noble gives, and the workflow’s verification accepts them', () => {
    for (let k = 0; k < 5; k++) {
      const pair = generateApprovalKeyPair();
      const native = nativeEd25519Signer(pair.privateKeyHex);
      for (let i = 0; i < 40; i++) {
        const claims = claimsFor(k * 40 + i);
        const signed = signDecisionWith(claims, pair.keyId, native);
        assert.deepEqual(signed, signDecision(claims, pair.privateKeyHex, pair.keyId));
        const trust = {
          keys: { [pair.keyId]: pair.publicKeyHex },
          operators: { [claims.operator]: { tenants: ['acme'], roles: ['approver' as const] } },
        };
        const expected = { decisions: ['approve', 'reject'] as const, key: claims.key, tenant: 'acme' };
        assert.deepEqual(
          verifyDecision(signed, { ...expected, decisions: [...expected.decisions] }, trust, NOW + i),
          claims,
        );
      }
    }
  });

  it('refuses a key that is not 32 bytes of hex, naming the field, before it signs anything', () => {
    for (const bad of ['', 'zz'.repeat(32), 'ab'.repeat(31), 'ab'.repeat(33)]) {
      assert.throws(
        () => nativeEd25519Signer(bad),
        (err: unknown) => errorCodeOf(err) === 'InvalidIntent' && errorDetailsOf(err)?.field === 'privateKeyHex',
      );
    }
  });

  it('checks the claims before it signs, as signDecision does', () => {
    const pair = generateApprovalKeyPair();
    let signedBytes = 0;
    const counting = (bytes: Uint8Array) => {
      signedBytes++;
      return nativeEd25519Signer(pair.privateKeyHex)(bytes);
    };
    assert.throws(
      () => signDecisionWith({ ...claimsFor(1), requestHash: 'abc' }, pair.keyId, counting),
      (err: unknown) => errorCodeOf(err) === 'InvalidIntent' && errorDetailsOf(err)?.field === 'requestHash',
    );
    assert.equal(signedBytes, 0);
  });
});
