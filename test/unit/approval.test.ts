import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  APPROVAL_CLOCK_SKEW_MS,
  APPROVAL_SIGNING_DOMAIN,
  DEFAULT_APPROVAL_TTL_MS,
  MAX_APPROVAL_TTL_MS,
  approvalClaims,
  approvalSigningBytes,
  parseTrustedApprovalKeys,
  signApproval,
  verifyApproval,
  type ApprovalClaims,
  type ApprovalRejectionReason,
  type SignedApproval,
} from '../../policies/approval';
import { RetrysafeError } from '../../policies/errors';
import { canonicalJson, requestHash } from '../../policies/request-hash';
import { generateApprovalKeyPair } from '../../scripts/lib/approval-keys';

const KEY = 'charge:v1:acme:renewal-2026-08-28-01';
const HASH = requestHash({ operation: 'charge', amountCents: 7_000 });
const NOW = Date.parse('2026-08-28T10:00:00.000Z');
const service = generateApprovalKeyPair();
const attacker = generateApprovalKeyPair();
const TRUSTED = { [service.keyId]: service.publicKeyHex };

const claims = (over: Partial<ApprovalClaims> = {}): ApprovalClaims => ({
  ...approvalClaims({
    key: KEY,
    requestHash: HASH,
    approver: 'alice',
    decision: 'approve',
    nowMs: NOW,
    nonce: 'n0nce-0123456789abcdef',
  }),
  ...over,
});
const signed = (over: Partial<ApprovalClaims> = {}): SignedApproval =>
  signApproval(claims(over), service.privateKeyHex, service.keyId);
const verify = (approval: unknown, nowMs = NOW + 1_000) =>
  verifyApproval(approval, { key: KEY, requestHash: HASH }, TRUSTED, nowMs);

function refused(approval: unknown, reason: ApprovalRejectionReason, nowMs?: number): RetrysafeError {
  let caught: unknown;
  try {
    verify(approval, nowMs);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof RetrysafeError, `expected ApprovalRejected (${reason}), got ${String(caught)}`);
  assert.equal(caught.code, 'ApprovalRejected');
  assert.equal(caught.details.reason, reason, caught.message);
  assert.equal(caught.retryable, false);
  return caught;
}

describe('approval signing bytes', () => {
  it('are the domain prefix and the canonical JSON of the claims', () => {
    const c = claims();
    assert.equal(new TextDecoder().decode(approvalSigningBytes(c)), APPROVAL_SIGNING_DOMAIN + canonicalJson(c));
    assert.ok(new TextDecoder().decode(approvalSigningBytes(c)).startsWith('retrysafe-approval-v1\n{'));
  });

  it('do not depend on key order', () => {
    const c = claims();
    const reordered = Object.fromEntries(Object.entries(c).reverse()) as ApprovalClaims;
    assert.deepEqual(approvalSigningBytes(reordered), approvalSigningBytes(c));
  });
});

describe('verifyApproval', () => {
  it('accepts a valid approval and returns its claims', () => {
    const approval = signed();
    assert.deepEqual(verify(approval), approval.claims);
    assert.equal(approval.claims.expiresAt, new Date(NOW + DEFAULT_APPROVAL_TTL_MS).toISOString());
  });

  it('accepts a signed rejection too (the caller acts on the decision)', () => {
    assert.equal(verify(signed({ decision: 'reject' })).decision, 'reject');
  });

  it('accepts an approval that went through JSON', () => {
    assert.equal(verify(JSON.parse(JSON.stringify(signed()))).approver, 'alice');
  });

  it('refuses a forged signature (one byte flipped)', () => {
    const approval = signed();
    const first = parseInt(approval.signature.slice(0, 2), 16) ^ 0x01;
    refused(
      { ...approval, signature: first.toString(16).padStart(2, '0') + approval.signature.slice(2) },
      'bad-signature',
    );
  });

  it('refuses claims changed after signing', () => {
    const approval = signed();
    refused({ ...approval, claims: { ...approval.claims, approver: 'mallory' } }, 'bad-signature');
    refused(
      { ...approval, claims: { ...approval.claims, expiresAt: new Date(NOW + 30 * 60_000).toISOString() } },
      'bad-signature',
    );
  });

  it('refuses a signature by an untrusted key, under its own id or the trusted id', () => {
    refused(signApproval(claims(), attacker.privateKeyHex, attacker.keyId), 'unknown-key');
    refused(signApproval(claims(), attacker.privateKeyHex, service.keyId), 'bad-signature');
  });

  it('refuses an approval for another action key', () => {
    const err = refused(signed({ key: 'charge:v1:acme:renewal-2026-08-28-02' }), 'wrong-action');
    assert.match(err.message, /renewal-2026-08-28-02, not charge:v1:acme:renewal-2026-08-28-01/);
  });

  it('refuses an approval for a changed request hash', () => {
    const err = refused(
      signed({ requestHash: requestHash({ operation: 'charge', amountCents: 70_000 }) }),
      'hash-mismatch',
    );
    assert.match(err.message, /approve that/);
  });

  it('refuses an expired approval, at the expiry instant and after', () => {
    const approval = signed();
    verify(approval, NOW + DEFAULT_APPROVAL_TTL_MS - 1);
    refused(approval, 'expired', NOW + DEFAULT_APPROVAL_TTL_MS);
    refused(approval, 'expired', NOW + 24 * 60 * 60_000);
  });

  it('refuses an approval valid for longer than the maximum TTL', () => {
    verify(signed({ expiresAt: new Date(NOW + MAX_APPROVAL_TTL_MS).toISOString() }));
    refused(signed({ expiresAt: new Date(NOW + MAX_APPROVAL_TTL_MS + 1).toISOString() }), 'expiry-too-long');
  });

  it('tolerates clock skew on issuedAt, but not more', () => {
    const approval = signed();
    verify(approval, NOW - APPROVAL_CLOCK_SKEW_MS);
    refused(approval, 'not-yet-valid', NOW - APPROVAL_CLOCK_SKEW_MS - 1);
  });

  it('refuses an approval that expires before it was issued', () => {
    refused(signed({ expiresAt: new Date(NOW - 1).toISOString() }), 'malformed');
  });

  it('refuses a missing signature as unsigned', () => {
    const { signature: _signature, ...unsigned } = signed();
    refused(unsigned, 'unsigned');
    refused({ ...signed(), signature: '' }, 'unsigned');
    refused({ ...signed(), signature: null }, 'unsigned');
  });

  it('refuses malformed shapes, naming the field', () => {
    const approval = signed();
    refused(null, 'malformed');
    refused('approved', 'malformed');
    refused([approval], 'malformed');
    refused({ confirmed: true, signature: 'yes' }, 'malformed');
    assert.match(refused({ ...approval, signature: 'zz' }, 'malformed').message, /signature/);
    assert.match(refused({ ...approval, publicKeyId: 7 }, 'malformed').message, /publicKeyId/);
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, issuedAt: 'yesterday' } }, 'malformed').message,
      /claims\.issuedAt/,
    );
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, decision: 'yes' } }, 'malformed').message,
      /claims\.decision/,
    );
    const { nonce: _nonce, ...noNonce } = approval.claims;
    assert.match(refused({ ...approval, claims: noNonce }, 'malformed').message, /claims\.nonce/);
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, confirmed: true } }, 'malformed').message,
      /claims\.confirmed: unknown field/,
    );
    assert.match(refused({ ...approval, extra: 1 }, 'malformed').message, /extra/);
  });

  it('refuses a model-written "confirmed: true"', () => {
    refused({ confirmed: true }, 'unsigned');
  });

  it('does not look up prototype properties as key ids', () => {
    refused({ ...signed(), publicKeyId: 'constructor' }, 'unknown-key');
  });
});

describe('signApproval and trusted keys', () => {
  it('refuses to sign malformed claims, naming the field', () => {
    assert.throws(
      () => signApproval({ ...claims(), requestHash: 'abc' }, service.privateKeyHex, service.keyId),
      /requestHash/,
    );
    assert.throws(() => signApproval(claims(), 'not-a-key', service.keyId), /privateKeyHex|private key/);
  });

  it('builds claims with a bounded TTL', () => {
    assert.throws(
      () =>
        approvalClaims({
          key: KEY,
          requestHash: HASH,
          approver: 'a',
          decision: 'approve',
          nowMs: NOW,
          nonce: 'x'.repeat(16),
          ttlMs: MAX_APPROVAL_TTL_MS + 1,
        }),
      /ttl/,
    );
  });

  it('parses a trusted key table and names a bad entry', () => {
    assert.deepEqual(parseTrustedApprovalKeys(TRUSTED), TRUSTED);
    assert.throws(() => parseTrustedApprovalKeys({ k1: 'abcd' }), /k1: must be a 32-byte hex/);
    assert.throws(() => parseTrustedApprovalKeys({}), /at least one key/);
  });
});
