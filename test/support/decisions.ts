import { randomBytes } from 'node:crypto';
import {
  decisionClaims,
  signDecision,
  type Decision,
  type DecisionClaims,
  type OperatorScopes,
  type SignedDecision,
} from '../../policies/signed-decision';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { tenantOfTarget } from '../../cli/approvals/approval-signer';

/**
 * Signed decisions for tests: a trusted approval key (and a second one, as during a rotation), a key the
 * workers do not trust (a retired one), and operators with scopes. `sign` signs like the approval
 * service; its overrides forge what an attacker would change.
 */
export const TEST_OPERATORS: OperatorScopes = {
  alice: { tenants: ['acme'], roles: ['approver', 'resolver', 'admin'] },
  /** May approve but not resolve or steer runs. */
  ava: { tenants: ['acme'], roles: ['approver'] },
  /** An operator of another tenant. */
  gabe: { tenants: ['globex'], roles: ['approver', 'resolver', 'admin'] },
};

export interface DecisionKit {
  current: ReturnType<typeof generateApprovalKeyPair>;
  /** Also trusted: the key being rotated in. */
  next: ReturnType<typeof generateApprovalKeyPair>;
  /** Not trusted any more. */
  retired: ReturnType<typeof generateApprovalKeyPair>;
  trustedKeys: Record<string, string>;
  workerEnv: Record<string, string>;
  sign(
    decision: Decision,
    key: string,
    fields?: { requestHash?: string; params?: Record<string, unknown> },
    forge?: Partial<DecisionClaims> & { with?: 'current' | 'next' | 'retired'; ttlMs?: number },
  ): SignedDecision;
}

export function decisionKit(clock: () => number = Date.now): DecisionKit {
  const current = generateApprovalKeyPair();
  const next = generateApprovalKeyPair();
  const retired = generateApprovalKeyPair();
  const trustedKeys = { [current.keyId]: current.publicKeyHex, [next.keyId]: next.publicKeyHex };
  return {
    current,
    next,
    retired,
    trustedKeys,
    workerEnv: {
      RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify(trustedKeys),
      RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(TEST_OPERATORS),
    },
    sign(decision, key, fields = {}, forge = {}) {
      const { with: which = 'current', ttlMs, ...claims } = forge;
      const pair = { current, next, retired }[which];
      const base = decisionClaims({
        decision,
        key,
        tenant: tenantOfTarget(key),
        ...fields,
        operator: 'alice',
        nowMs: clock(),
        nonce: randomBytes(16).toString('hex'),
        ...(ttlMs !== undefined ? { ttlMs } : {}),
      });
      return signDecision({ ...base, ...claims }, pair.privateKeyHex, pair.keyId);
    },
  };
}
