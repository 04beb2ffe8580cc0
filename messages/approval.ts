/**
 * The approval surface of an action's workflow: the dry run a person reviews, and the update that
 * carries their signed decision. Clients import these definitions; the action workflow implements
 * them, verifying each approval with policies/approval.ts in the update's validator.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { SignedDecision } from '../policies/signed-decision';
import type { DryRun } from '../policies/dry-run';
import type { ActionStatus } from '../policies/action-status';

export type { DryRun } from '../policies/dry-run';
export type { SignedDecision } from '../policies/signed-decision';

/** What the action did with a verified approval. */
export interface ApprovalOutcome {
  key: string;
  decision: 'approve' | 'reject';
  approver: string;
  /** The action's status once the decision is applied. */
  status: ActionStatus;
}

/** A signed approval or rejection for the action's current request; forged, mismatched or expired ones are refused. */
export const approveUpdate = defineUpdate<ApprovalOutcome, [SignedDecision]>('retrysafe.approve');
/** The dry run awaiting confirmation, or undefined when the action needs none (or has not reached that point). */
export const dryRunQuery = defineQuery<DryRun | undefined>('retrysafe.dryRun');
