import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519';
import { bytesToHex } from '@noble/hashes/utils';
import {
  APPROVAL_CLOCK_SKEW_MS,
  DECISIONS,
  decisionSchemas,
  DECISION_REJECTION_REASONS,
  DECISION_SIGNING_DOMAIN,
  DEFAULT_APPROVAL_TTL_MS,
  MAX_APPROVAL_TTL_MS,
  ROLES,
  ROLE_FOR,
  decisionClaims,
  decisionParams,
  decisionSigningBytes,
  parseOperatorScopes,
  parseTrustedApprovalKeys,
  signDecision,
  verifyDecision,
  type Decision,
  type DecisionClaims,
  type DecisionRejectionReason,
  type DecisionTrust,
  type ExpectedDecision,
  type OperatorScopes,
  type Role,
  type SignedDecision,
} from '../../policies/signed-decision';
import { RetrysafeError } from '../../policies/errors';
import { canonicalJson, requestHash } from '../../policies/request-hash';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';

const KEY = 'charge:v1:acme:renewal-2026-08-28-01';
const RUN = 'run:acme:renewal-2026-08-28-01';
const HASH = requestHash({ operation: 'charge', amountCents: 7_000 });
const NOW = Date.parse('2026-08-28T10:00:00.000Z');
const service = generateApprovalKeyPair();
/** The key being rotated in: trusted alongside the current one. */
const next = generateApprovalKeyPair();
const attacker = generateApprovalKeyPair();
const TRUSTED = { [service.keyId]: service.publicKeyHex };
const OPERATORS: OperatorScopes = {
  alice: { tenants: ['acme'], roles: ['approver', 'resolver', 'admin'] },
  /** May approve on acme, nothing else. */
  ava: { tenants: ['acme'], roles: ['approver'] },
  /** Every role, but on another tenant only. */
  gabe: { tenants: ['globex'], roles: ['approver', 'resolver', 'admin'] },
  /** Every tenant. */
  root: { tenants: ['*'], roles: ['approver', 'resolver', 'admin'] },
  /** Listed, with no roles: may decide nothing. */
  nobody: { tenants: ['*'], roles: [] },
};
const TRUST: DecisionTrust = { keys: TRUSTED, operators: OPERATORS };
const ACTION_EXPECTED: ExpectedDecision = {
  decisions: ['approve', 'reject'],
  key: KEY,
  tenant: 'acme',
  requestHash: HASH,
};

const claims = (over: Partial<DecisionClaims> = {}): DecisionClaims => ({
  ...decisionClaims({
    decision: 'approve',
    key: KEY,
    tenant: 'acme',
    requestHash: HASH,
    operator: 'alice',
    nowMs: NOW,
    nonce: 'n0nce-0123456789abcdef',
  }),
  ...over,
});
const signed = (over: Partial<DecisionClaims> = {}): SignedDecision =>
  signDecision(claims(over), service.privateKeyHex, service.keyId);
const verify = (
  approval: unknown,
  nowMs = NOW + 1_000,
  expected: ExpectedDecision = ACTION_EXPECTED,
  trust: DecisionTrust = TRUST,
) => verifyDecision(approval, expected, trust, nowMs);

function caughtFrom(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

function assertRejected(caught: unknown, reason: DecisionRejectionReason): RetrysafeError {
  assert.ok(caught instanceof RetrysafeError, `expected DecisionRejected (${reason}), got ${String(caught)}`);
  assert.equal(caught.code, 'DecisionRejected');
  assert.equal(caught.details.reason, reason, caught.message);
  assert.equal(caught.retryable, false);
  return caught;
}

function refused(
  approval: unknown,
  reason: DecisionRejectionReason,
  nowMs?: number,
  expected?: ExpectedDecision,
  trust?: DecisionTrust,
): RetrysafeError {
  return assertRejected(
    caughtFrom(() => verify(approval, nowMs, expected, trust)),
    reason,
  );
}

/** What a workflow receiving a run decision expects (no request hash: runs have none). */
const runExpected = (decision: Decision): ExpectedDecision => ({ decisions: [decision], key: RUN, tenant: 'acme' });
/** A valid envelope for `decision`, aimed at an action (approve, reject, resolve) or at the run. */
function signedFor(decision: Decision, operator: string, over: Partial<DecisionClaims> = {}): SignedDecision {
  const onAction = decision === 'approve' || decision === 'reject' || decision === 'resolve';
  const base = claims({ decision, operator, ...(onAction ? {} : { key: RUN }) });
  if (!onAction) delete base.requestHash;
  return signDecision({ ...base, ...over }, service.privateKeyHex, service.keyId);
}
const expectedFor = (decision: Decision): ExpectedDecision =>
  decision === 'approve' || decision === 'reject' || decision === 'resolve'
    ? { ...ACTION_EXPECTED, decisions: [decision] }
    : runExpected(decision);

describe('decision signing bytes', () => {
  it('are the domain prefix and the canonical JSON of the claims', () => {
    const c = claims();
    assert.equal(new TextDecoder().decode(decisionSigningBytes(c)), DECISION_SIGNING_DOMAIN + canonicalJson(c));
    assert.ok(new TextDecoder().decode(decisionSigningBytes(c)).startsWith('retrysafe-decision-v1\n{'));
  });

  it('do not depend on key order', () => {
    const c = claims({ params: { reason: 'looks right', a: 1 } });
    const reordered = Object.fromEntries(Object.entries(c).reverse()) as DecisionClaims;
    assert.deepEqual(decisionSigningBytes(reordered), decisionSigningBytes(c));
  });

  it('bind the domain: the same claims signed under another prefix (or none) do not verify', () => {
    const c = claims();
    for (const prefix of ['retrysafe-approval-v1\n', '']) {
      const bytes = new TextEncoder().encode(prefix + canonicalJson(c));
      const signature = bytesToHex(ed25519.sign(bytes, service.privateKeyHex));
      refused({ claims: c, signature, publicKeyId: service.keyId }, 'bad-signature');
    }
  });
});

describe('verifyDecision', () => {
  it('accepts a valid approval and returns its claims', () => {
    const approval = signed();
    assert.deepEqual(verify(approval), approval.claims);
    assert.equal(approval.claims.expiresAt, new Date(NOW + DEFAULT_APPROVAL_TTL_MS).toISOString());
  });

  it('accepts a signed rejection too (the caller acts on the decision)', () => {
    assert.equal(verify(signed({ decision: 'reject' })).decision, 'reject');
  });

  it('accepts an approval that went through JSON', () => {
    assert.equal(verify(JSON.parse(JSON.stringify(signed()))).operator, 'alice');
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
    refused({ ...approval, claims: { ...approval.claims, operator: 'mallory' } }, 'bad-signature');
    refused({ ...approval, claims: { ...approval.claims, operator: 'root' } }, 'bad-signature');
    refused(
      { ...approval, claims: { ...approval.claims, expiresAt: new Date(NOW + 30 * 60_000).toISOString() } },
      'bad-signature',
    );
    refused({ ...approval, claims: { ...approval.claims, decision: 'reject' } }, 'bad-signature');
    refused({ ...approval, claims: { ...approval.claims, tenant: 'globex' } }, 'bad-signature');
  });

  it('refuses parameters changed, added or removed after signing (the signature covers them)', () => {
    const params = { outcome: 'confirmed', providerRef: 'msg_1', reason: 'seen in provider dashboard' };
    const resolution = signedFor('resolve', 'alice', { params });
    const expected = expectedFor('resolve');
    assert.deepEqual(verify(resolution, undefined, expected).params, params);
    refused(
      { ...resolution, claims: { ...resolution.claims, params: { ...params, providerRef: 'msg_666' } } },
      'bad-signature',
      undefined,
      expected,
    );
    refused(
      { ...resolution, claims: { ...resolution.claims, params: { ...params, outcome: 'compensate' } } },
      'bad-signature',
      undefined,
      expected,
    );
    const { params: _params, ...withoutParams } = resolution.claims;
    refused({ ...resolution, claims: withoutParams }, 'bad-signature', undefined, expected);
    const approval = signed();
    refused({ ...approval, claims: { ...approval.claims, params: { reason: 'added later' } } }, 'bad-signature');
  });

  it('refuses a signature by an untrusted key, under its own id or the trusted id', () => {
    refused(signDecision(claims(), attacker.privateKeyHex, attacker.keyId), 'unknown-key');
    refused(signDecision(claims(), attacker.privateKeyHex, service.keyId), 'bad-signature');
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

  it('refuses an action decision that carries no request hash', () => {
    const c = claims();
    delete c.requestHash;
    refused(signDecision(c, service.privateKeyHex, service.keyId), 'hash-mismatch');
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
    const { tenant: _tenant, ...noTenant } = approval.claims;
    assert.match(refused({ ...approval, claims: noTenant }, 'malformed').message, /claims\.tenant/);
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, confirmed: true } }, 'malformed').message,
      /claims\.confirmed: unknown field/,
    );
    // The old claim name is an unknown field now: an envelope cannot smuggle a second identity in.
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, approver: 'alice' } }, 'malformed').message,
      /claims\.approver: unknown field/,
    );
    assert.match(
      refused({ ...approval, claims: { ...approval.claims, params: ['outcome'] } }, 'malformed').message,
      /claims\.params/,
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

describe('verifyDecision: what the decision is for', () => {
  it('refuses a validly signed decision of another kind (wrong-decision)', () => {
    // A genuine resolve sent to the approve update, and a genuine approval sent to the resolve update.
    const resolution = signedFor('resolve', 'alice', {
      params: { outcome: 'failed', reason: 'never sent' },
    });
    assert.equal(verify(resolution, undefined, expectedFor('resolve')).decision, 'resolve');
    const err = refused(resolution, 'wrong-decision');
    assert.equal(err.details.decision, 'resolve');
    assert.match(err.message, /a resolve decision does not belong here; this takes approve or reject/);
    refused(signed(), 'wrong-decision', undefined, expectedFor('resolve'));
    // A reject is not a cancel, even on the run it names.
    refused(signedFor('reject', 'alice', { key: RUN }), 'wrong-decision', undefined, runExpected('cancel'));
  });

  it('refuses a validly signed decision for another tenant (wrong-tenant)', () => {
    // root may act on every tenant, so only the tenant the envelope names is wrong here.
    const forGlobex = signed({ tenant: 'globex', operator: 'root' });
    assert.equal(verify(signed({ operator: 'root' })).operator, 'root');
    const err = refused(forGlobex, 'wrong-tenant');
    assert.equal(err.details.tenant, 'globex');
    assert.match(err.message, /tenant globex, not acme/);
  });

  it('refuses a validly signed decision by an operator the worker does not know (unknown-operator)', () => {
    for (const operator of ['mallory', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const err = refused(signed({ operator }), 'unknown-operator');
      assert.equal(err.details.operator, operator);
    }
  });

  it('refuses an operator lacking the role the decision needs (missing-role, naming it)', () => {
    const err = refused(
      signedFor('resolve', 'ava', { params: { outcome: 'failed', reason: 'never sent' } }),
      'missing-role',
      undefined,
      expectedFor('resolve'),
    );
    assert.equal(err.details.missing, 'role:resolver');
    assert.equal(err.details.operator, 'ava');
    assert.equal(
      refused(signedFor('cancel', 'ava'), 'missing-role', undefined, runExpected('cancel')).details.missing,
      'role:admin',
    );
    assert.equal(refused(signed({ operator: 'nobody' }), 'missing-role').details.missing, 'role:approver');
    // ava may still approve: the role, not the operator, is what was missing.
    assert.equal(verify(signed({ operator: 'ava' })).operator, 'ava');
  });

  it('refuses an operator of other tenants (missing-tenant, naming it), and "*" covers every tenant', () => {
    const err = refused(signed({ operator: 'gabe' }), 'missing-tenant');
    assert.equal(err.details.missing, 'tenant:acme');
    assert.equal(err.details.operator, 'gabe');
    // gabe's scope is real: on globex, the same decision is accepted.
    const globexKey = 'charge:v1:globex:renewal-2026-08-28-01';
    const onGlobex = signed({ operator: 'gabe', key: globexKey, tenant: 'globex' });
    assert.equal(
      verify(onGlobex, undefined, { ...ACTION_EXPECTED, key: globexKey, tenant: 'globex' }).tenant,
      'globex',
    );
    // root ("*") decides on both.
    verify(signed({ operator: 'root' }));
    verify(signed({ operator: 'root', key: globexKey, tenant: 'globex' }), undefined, {
      ...ACTION_EXPECTED,
      key: globexKey,
      tenant: 'globex',
    });
  });

  it('checks the scope from the trust it is given, not from anything in the envelope', () => {
    const approval = signed({ operator: 'ava' });
    verify(approval);
    // The same envelope, once the worker's configuration no longer lists ava, counts for nothing.
    const { ava: _ava, ...withoutAva } = OPERATORS;
    refused(approval, 'unknown-operator', undefined, undefined, { keys: TRUSTED, operators: withoutAva });
    refused(approval, 'missing-tenant', undefined, undefined, {
      keys: TRUSTED,
      operators: { ...OPERATORS, ava: { tenants: ['globex'], roles: ['approver'] } },
    });
  });

  it('refuses a nonce already used (replayed), and asks about this envelope’s nonce', () => {
    const approval = signed();
    const asked: string[] = [];
    const used = new Set([approval.claims.nonce]);
    const expected = {
      ...ACTION_EXPECTED,
      nonceUsed: (n: string) => {
        asked.push(n);
        return used.has(n);
      },
    };
    const err = refused(approval, 'replayed', undefined, expected);
    assert.equal(err.details.nonce, approval.claims.nonce);
    assert.deepEqual(asked, [approval.claims.nonce]);
    // A fresh envelope for the same action, with another nonce, is accepted.
    verify(signed({ nonce: 'another-nonce-0123456789' }), undefined, expected);
  });

  it('checks scope and nonce only once the envelope is authentic and current', () => {
    const always = { ...ACTION_EXPECTED, nonceUsed: () => true };
    // A forged envelope is refused for its signature, not for what it claims.
    const forged = {
      ...signed({ operator: 'gabe' }),
      claims: { ...signed({ operator: 'gabe' }).claims, operator: 'mallory' },
    };
    refused(forged, 'bad-signature', undefined, always);
    refused(
      signDecision(claims({ operator: 'mallory' }), attacker.privateKeyHex, attacker.keyId),
      'unknown-key',
      undefined,
      always,
    );
    // An expired one is expired, even when replayed.
    refused(signed(), 'expired', NOW + DEFAULT_APPROVAL_TTL_MS, always);
  });

  it('accepts a run decision, which carries no request hash', () => {
    const cancel = signedFor('cancel', 'alice', { params: { reason: 'customer asked to stop' } });
    assert.equal(cancel.claims.requestHash, undefined);
    assert.equal(verify(cancel, undefined, runExpected('cancel')).key, RUN);
    refused(cancel, 'wrong-action', undefined, { ...runExpected('cancel'), key: 'run:acme:other-event' });
  });

  it('has a test for every refusal reason it can give', () => {
    // Keep this list in step with the tests above when a reason is added.
    const covered: DecisionRejectionReason[] = [
      'malformed',
      'unsigned',
      'unknown-key',
      'bad-signature',
      'wrong-decision',
      'wrong-action',
      'wrong-tenant',
      'hash-mismatch',
      'expired',
      'not-yet-valid',
      'expiry-too-long',
      'unknown-operator',
      'missing-role',
      'missing-tenant',
      'replayed',
    ];
    assert.deepEqual([...covered].sort(), [...DECISION_REJECTION_REASONS].sort());
  });
});

describe('approval key rotation', () => {
  const rotating: DecisionTrust = {
    keys: { [service.keyId]: service.publicKeyHex, [next.keyId]: next.publicKeyHex },
    operators: OPERATORS,
  };

  it('accepts decisions signed by either of two trusted keys', () => {
    const byCurrent = signDecision(claims(), service.privateKeyHex, service.keyId);
    const byNext = signDecision(claims(), next.privateKeyHex, next.keyId);
    assert.equal(verify(byCurrent, undefined, undefined, rotating).operator, 'alice');
    assert.equal(verify(byNext, undefined, undefined, rotating).operator, 'alice');
  });

  it('refuses a key that is not in the table, and a retired key once it is removed', () => {
    refused(
      signDecision(claims(), attacker.privateKeyHex, attacker.keyId),
      'unknown-key',
      undefined,
      undefined,
      rotating,
    );
    // After the rotation, only `next` is trusted: the old key's envelopes stop counting.
    const retired: DecisionTrust = { keys: { [next.keyId]: next.publicKeyHex }, operators: OPERATORS };
    const err = refused(
      signDecision(claims(), service.privateKeyHex, service.keyId),
      'unknown-key',
      undefined,
      undefined,
      retired,
    );
    assert.equal(err.details.publicKeyId, service.keyId);
    verify(signDecision(claims(), next.privateKeyHex, next.keyId), undefined, undefined, retired);
  });

  it('binds a signature to its key id: one trusted key cannot pass for the other', () => {
    refused(signDecision(claims(), next.privateKeyHex, service.keyId), 'bad-signature', undefined, undefined, rotating);
    refused(signDecision(claims(), service.privateKeyHex, next.keyId), 'bad-signature', undefined, undefined, rotating);
  });

  it('refuses a trusted entry that is not a public key, naming it', () => {
    const broken: DecisionTrust = { keys: { [service.keyId]: 'not-hex' }, operators: OPERATORS };
    assert.match(
      refused(signed(), 'unknown-key', undefined, undefined, broken).message,
      /fix the worker's configuration/,
    );
  });
});

describe('roles', () => {
  it('ROLE_FOR gives every decision exactly one known role', () => {
    assert.deepEqual(Object.keys(ROLE_FOR).sort(), [...DECISIONS].sort());
    for (const decision of DECISIONS) assert.ok((ROLES as readonly string[]).includes(ROLE_FOR[decision]), decision);
    assert.deepEqual(ROLE_FOR, {
      approve: 'approver',
      reject: 'approver',
      resolve: 'resolver',
      'accept-risk': 'resolver',
      'raise-ceiling': 'admin',
      resume: 'admin',
      cancel: 'admin',
    });
  });

  for (const decision of DECISIONS) {
    it(`${decision} is accepted with the ${ROLE_FOR[decision]} role alone, refused with every other role`, () => {
      const needed = ROLE_FOR[decision];
      const others = ROLES.filter((r): r is Role => r !== needed);
      const trust: DecisionTrust = {
        keys: TRUSTED,
        operators: {
          holder: { tenants: ['acme'], roles: [needed] },
          others: { tenants: ['acme'], roles: others },
        },
      };
      assert.equal(verify(signedFor(decision, 'holder'), undefined, expectedFor(decision), trust).decision, decision);
      const err = refused(signedFor(decision, 'others'), 'missing-role', undefined, expectedFor(decision), trust);
      assert.equal(err.details.missing, `role:${needed}`);
    });
  }
});

describe('decisionParams', () => {
  const resolveClaims = (params: Record<string, unknown> | undefined) =>
    ({ ...claims({ decision: 'resolve' }), ...(params !== undefined ? { params } : {}) }) as DecisionClaims & {
      decision: 'resolve';
    };

  function malformed(fn: () => unknown, field: string): RetrysafeError {
    const err = assertRejected(caughtFrom(fn), 'malformed');
    assert.equal(err.details.field, field, err.message);
    assert.match(err.message, new RegExp(`: ${field.replace('.', '\\.')}: `));
    return err;
  }

  it('has a schema for every decision', () => {
    assert.deepEqual(Object.keys(decisionSchemas().DECISION_PARAMS).sort(), [...DECISIONS].sort());
  });

  it('builds its schemas on first use, once, and none when the module is evaluated', () => {
    assert.equal(decisionSchemas(), decisionSchemas(), 'built once per module scope');
    // In a workflow the module is evaluated afresh for every workflow; a schema built at its top level would be built
    // for every workflow on a retrysafe worker, decision or not (about a third of a workflow's CPU when they were).
    const file = path.join(__dirname, '..', '..', 'policies', 'signed-decision.ts');
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const zodCallsAtTopLevel: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node)) return;
      if (ts.isCallExpression(node) && /^z\b/.test(node.expression.getText(source))) {
        zodCallsAtTopLevel.push(`line ${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
        return;
      }
      ts.forEachChild(node, visit);
    };
    source.statements.forEach(visit);
    assert.deepEqual(zodCallsAtTopLevel, [], 'zod calls outside any function');
  });

  it('returns the parameters of a well-formed decision', () => {
    assert.deepEqual(
      decisionParams(resolveClaims({ outcome: 'confirmed', providerRef: 'msg_1', reason: '  seen in dashboard ' })),
      { outcome: 'confirmed', providerRef: 'msg_1', reason: 'seen in dashboard' },
    );
    assert.deepEqual(decisionParams(resolveClaims({ outcome: 'failed', reason: 'never sent' })), {
      outcome: 'failed',
      reason: 'never sent',
    });
    // An approval needs no parameters.
    assert.deepEqual(decisionParams({ ...claims(), decision: 'approve' }), {});
  });

  it('refuses malformed resolve parameters, naming the field', () => {
    malformed(() => decisionParams(resolveClaims(undefined)), 'params.outcome');
    malformed(() => decisionParams(resolveClaims({ reason: 'seen in dashboard' })), 'params.outcome');
    malformed(() => decisionParams(resolveClaims({ outcome: 'done', reason: 'seen in dashboard' })), 'params.outcome');
    malformed(() => decisionParams(resolveClaims({ outcome: 'failed' })), 'params.reason');
    malformed(() => decisionParams(resolveClaims({ outcome: 'failed', reason: ' x ' })), 'params.reason');
    const noRef = malformed(
      () => decisionParams(resolveClaims({ outcome: 'confirmed', reason: 'seen in dashboard' })),
      'params.providerRef',
    );
    assert.match(noRef.message, /providerRef seen at the provider/);
    malformed(
      () => decisionParams(resolveClaims({ outcome: 'failed', reason: 'never sent', operator: 'mallory' })),
      'params.operator',
    );
  });

  it('refuses malformed parameters of the other decisions, naming the field', () => {
    const of = <D extends Decision>(decision: D, params: Record<string, unknown>) =>
      ({ ...claims({ decision, params }) }) as DecisionClaims & { decision: D };
    malformed(
      () => decisionParams(of('raise-ceiling', { ceiling: 'charges', newLimit: '9', reason: 'approved by finance' })),
      'params.newLimit',
    );
    malformed(
      () => decisionParams(of('raise-ceiling', { ceiling: 'charges', newLimit: -1, reason: 'approved by finance' })),
      'params.newLimit',
    );
    malformed(
      () => decisionParams(of('raise-ceiling', { newLimit: 9, reason: 'approved by finance' })),
      'params.ceiling',
    );
    malformed(() => decisionParams(of('cancel', {})), 'params.reason');
    malformed(() => decisionParams(of('resume', {})), 'params.reason');
    malformed(() => decisionParams(of('accept-risk', {})), 'params.reason');
    malformed(() => decisionParams(of('approve', { amountCents: 1 })), 'params.amountCents');
    assert.deepEqual(
      decisionParams(of('raise-ceiling', { ceiling: 'charges', newLimit: 9, reason: 'approved by finance' })),
      { ceiling: 'charges', newLimit: 9, reason: 'approved by finance' },
    );
  });
});

describe('signDecision, operator scopes and trusted keys', () => {
  it('refuses to sign malformed claims, naming the field', () => {
    assert.throws(
      () => signDecision({ ...claims(), requestHash: 'abc' }, service.privateKeyHex, service.keyId),
      /requestHash/,
    );
    assert.throws(() => signDecision({ ...claims(), tenant: 'a b' }, service.privateKeyHex, service.keyId), /tenant/);
    assert.throws(() => signDecision(claims(), 'not-a-key', service.keyId), /privateKeyHex|private key/);
  });

  it('builds claims with a bounded TTL', () => {
    assert.throws(
      () =>
        decisionClaims({
          decision: 'approve',
          key: KEY,
          tenant: 'acme',
          requestHash: HASH,
          operator: 'a',
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

  it('parses operator scopes and names a bad entry', () => {
    assert.deepEqual(parseOperatorScopes(OPERATORS), OPERATORS);
    assert.throws(() => parseOperatorScopes({ alice: { tenants: ['acme'], roles: ['god'] } }), /alice\.roles\.0/);
    assert.throws(() => parseOperatorScopes({ alice: { tenants: ['a b'], roles: [] } }), /alice\.tenants\.0/);
    assert.throws(() => parseOperatorScopes({ alice: { tenants: ['acme'] } }), /alice\.roles/);
    assert.throws(
      () => parseOperatorScopes({ alice: { tenants: ['acme'], roles: [], admin: true } }),
      /alice\.admin: unknown field/,
    );
  });
});
