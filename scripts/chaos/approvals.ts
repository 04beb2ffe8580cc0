import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { submitApproval, tenantOfTarget } from '../../cli/approvals/approval-signer';
import type { ApprovalOutcome, Decision, SignedDecision } from 'retrysafe';
import { decisionClaims, signDecisionWith } from 'retrysafe';
import { nativeEd25519Signer } from '../../cli/approvals/native-signing';

/**
 * An approval service for one harness or benchmark run: a fresh Ed25519 key pair whose public half the
 * workers trust (RETRYSAFE_APPROVAL_PUBLIC_KEYS) and whose private half signs approvals of exact requests.
 * Actions the decision table sends to confirmation (every customer email) need one before they act.
 */
export interface Approver {
  /** Worker environment that makes this approver's signatures count: its public key and its operator's scope. */
  workerEnv: Record<string, string>;
  approve(client: Client, key: string, requestHash: string): Promise<ApprovalOutcome>;
  /** Signs any decision as this run's operator (resolve an action, accept a risk, steer a run). */
  sign(
    decision: Decision,
    key: string,
    fields?: { requestHash?: string; params?: Record<string, unknown> },
  ): SignedDecision;
}

export function createApprover(name = 'chaos-approver'): Approver {
  const pair = generateApprovalKeyPair();
  // Signed as the approval service signs (cli/approvals/approval-signer.ts): with the runtime's native Ed25519.
  const signBytes = nativeEd25519Signer(pair.privateKeyHex);
  const sign: Approver['sign'] = (decision, key, fields = {}) =>
    signDecisionWith(
      decisionClaims({
        decision,
        key,
        tenant: tenantOfTarget(key),
        ...fields,
        operator: name,
        nowMs: Date.now(),
        nonce: randomBytes(16).toString('hex'),
      }),
      pair.keyId,
      signBytes,
    );
  return {
    workerEnv: {
      RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [pair.keyId]: pair.publicKeyHex }),
      RETRYSAFE_OPERATOR_SCOPES: JSON.stringify({
        [name]: { tenants: ['*'], roles: ['approver', 'resolver', 'admin'] },
      }),
    },
    approve: (client, key, requestHash) => submitApproval(client, sign('approve', key, { requestHash })),
    sign,
  };
}
