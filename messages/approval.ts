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

/** What a workflow trusts after a refresh: key IDs and operator names, never the keys themselves. */
export interface TrustSummary {
  keyIds: string[];
  operators: string[];
}

/**
 * Asks a workflow that waits for a decision to re-read what its worker trusts now (approval keys and
 * operator scopes), from the worker's configuration. It carries nothing, so anyone may send it: it can
 * only make the workflow agree with a worker of its task queue. Refused while the workflow is not waiting
 * for a person's decision, more often than once per TRUST_REFRESH_INTERVAL_MS, and beyond
 * MAX_TRUST_REFRESHES_PER_WAIT in one wait (each one is a few history events).
 * Clients send it, then the decision once more, when a decision is refused for an unknown key or
 * operator scope (client/index.ts does this for every decision it submits).
 */
export const refreshTrustUpdate = defineUpdate<TrustSummary, []>('retrysafe.refreshTrust');
export const TRUST_REFRESH_INTERVAL_MS = 5_000;
/** At most this many refreshes per wait for a person: a wait's history cannot be grown without bound. */
export const MAX_TRUST_REFRESHES_PER_WAIT = 20;
/** Refusals a refresh can fix: the key or the operator's scope may have been added since the wait began. */
export const REFRESHABLE_REFUSALS = ['unknown-key', 'unknown-operator', 'missing-role', 'missing-tenant'] as const;
