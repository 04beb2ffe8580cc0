import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { approvalClaims, signApproval } from '../../policies/approval';
import type { ApprovalOutcome } from '../../messages/approval';
import { generateApprovalKeyPair } from '../lib/approval-keys';
import { submitApproval } from '../lib/approval-signer';

/**
 * An approval service for one harness or benchmark run: a fresh Ed25519 key pair whose public half the
 * workers trust (RETRYSAFE_APPROVAL_PUBLIC_KEYS) and whose private half signs approvals of exact requests.
 * Actions the decision table sends to confirmation (every customer email) need one before they act.
 */
export interface Approver {
  /** Worker environment that makes this approver's signatures count. */
  workerEnv: Record<string, string>;
  approve(client: Client, key: string, requestHash: string): Promise<ApprovalOutcome>;
}

export function createApprover(name = 'chaos-approver'): Approver {
  const pair = generateApprovalKeyPair();
  return {
    workerEnv: { RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [pair.keyId]: pair.publicKeyHex }) },
    approve(client, key, requestHash) {
      const claims = approvalClaims({
        key,
        requestHash,
        approver: name,
        decision: 'approve',
        nowMs: Date.now(),
        nonce: randomBytes(16).toString('hex'),
      });
      return submitApproval(client, signApproval(claims, pair.privateKeyHex, pair.keyId));
    },
  };
}
