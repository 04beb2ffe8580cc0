/**
 * The public surface of an action's workflow: its input, its snapshot, and the messages it takes.
 * Clients, activities and run workflows import these definitions; workflows/action.ts implements them.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SignedDecision } from '../policies/signed-decision';
import type { Json } from '../policies/tool';
import type { Intent } from '../policies/tool-registry';
import type { ActionStatus } from '../policies/action-status';
import type { DryRun } from '../policies/dry-run';
import type { RequestLogEntry } from '../policies/provider-requests';

/**
 * What starts an action workflow: its key, the persisted intent, its request hash, tenant and owner. The workflow ID is
 * the key.
 */
export interface ActionInput {
  key: string;
  intent: Intent;
  requestHash: string;
  tenant: string;
  /** Workflow ID of the run that first claimed the action. */
  owner: string;
  /** A saga's undo: a permanent failure goes to needs_review (a person decides), never to another attempt. */
  compensation?: boolean;
}

/** A claim of an action: the request hash it carries (a different one is refused) and who claims. */
export interface ClaimRequest {
  requestHash: string;
  /** Who claims: a run's workflow ID, or `client:<name>` for application code. */
  claimant: string;
  /** Workflow ID to signal on every status change, when the claimant is a workflow that waits. */
  notify?: string;
}

/**
 * What one execution at the provider came to, as whoever ran it reports it (a run's act on the row, the action
 * workflow's dispatch): the executor's verdict (`outcome`), its typed refusal (`rejected`), or none at all
 * (`no-verdict`: the activity died or timed out, and the provider may have committed). Every kind carries the
 * requests made.
 */
export type ExecutionReport =
  | { kind: 'outcome'; outcome: DispatchOutcome }
  | { kind: 'rejected'; code: string; message: string; sends: number; requests?: RequestLogEntry[] }
  | { kind: 'no-verdict'; message: string; sends: number; requests?: RequestLogEntry[] };

/** The executor's verdict, as activities/execute-action.ts returns it. */
export type DispatchOutcome = (
  | { status: 'confirmed'; providerRef: string; record: Json | null; via: 'send' | 'replay' | 'lookup' }
  | { status: 'unknown'; reason: string }
) & { sends: number; requests?: RequestLogEntry[] };

/** One status change of an action: when, from and to which status, why, and who (an operator, for signed decisions). */
export interface AuditEntry {
  at: string;
  from: ActionStatus | null;
  to: ActionStatus;
  reason: string;
  by?: string;
}

/** A provider request as the action records it: the executor's entry and the dispatch it belonged to. */
export interface RecordedRequest extends RequestLogEntry {
  dispatch: number;
}

/** One attempt to settle an unknown outcome: a lookup at the provider or a provider event, and what it found. */
export interface ReconciliationCheck {
  at: string;
  kind: 'lookup' | 'evidence';
  found: boolean;
  trustworthy: boolean;
  detail?: string;
}

/**
 * An action as its workflow knows it: status, request hash, provider reference, sends, audit trail, reconciliation
 * checks and the provider requests made.
 */
export interface ActionSnapshot {
  key: string;
  operation: string;
  tenant: string;
  status: ActionStatus;
  requestHash: string;
  owner: string;
  claimants: string[];
  summary: string;
  providerRef?: string;
  /** What the provider answered (the tool's `result`), recorded with the action. */
  record?: Json | null;
  error?: { code: string; message: string };
  /**
   * Requests sent to the provider for this action (calls of the tool's execute), counting those of
   * activity attempts that died before they could report (see `requests`).
   */
  sends: number;
  /**
   * Requests that may have reached the provider and left no record (`sends` does not count them): attempts the
   * ledger row shows past `dispatching` whose requests were lost with them (client/unrecorded-requests.ts). Set by
   * `RetrysafeClient.getAction` when it is not zero.
   */
  unrecordedSends?: number;
  dispatches: number;
  /** Every request the executor made, in order: which dispatch and attempt, and what the provider answered. */
  requests?: RecordedRequest[];
  /** How the decision table let the action proceed: automatic, confirm or human-only. */
  decisionMode?: 'automatic' | 'confirm' | 'human-only';
  /** The exact effect shown to the approver, for actions that need confirmation. */
  dryRun?: DryRun;
  /** Who signed the confirmation, when one was needed. */
  approvedBy?: string;
  checks: ReconciliationCheck[];
  audit: AuditEntry[];
  /**
   * Provider events received, one per event ID, in arrival order (evidence only: see `checks` for what they proved).
   */
  events?: ProviderEvent[];
  /** Events that contradict the action's outcome or each other, kept for a person to decide (`ops show`). */
  conflicts?: EventConflict[];
  /** `ledger` when the workflow is gone and this is the durable ledger's record of it. */
  source?: 'workflow' | 'ledger';
}

/** Evidence from the provider (webhook, settlement event) routed to the action by its key. */
export interface ProviderEvent {
  eventId: string;
  type: string;
  key?: string;
  /** Which provider's signed endpoint it came in on (the webhook router sets it). */
  provider?: string;
  providerRef?: string;
  outcome: 'succeeded' | 'failed';
  receivedAt?: string;
}

/** A provider event that disagrees with what the action holds: never applied, shown to a person. */
export interface EventConflict {
  at: string;
  eventId: string;
  type: string;
  outcome: ProviderEvent['outcome'];
  providerRef?: string;
  reason: string;
}

/** An authorized operator's decision on an action in needs_review, as read from its verified, signed envelope. */
export interface OperatorResolution {
  decision: 'confirmed' | 'not-happened' | 'failed' | 'compensate';
  operator: string;
  reason: string;
  providerRef?: string;
}

/**
 * Claims the action (sent with update-with-start, so the first claim creates it): answers its state, or refuses another
 * request hash.
 */
export const claimUpdate = defineUpdate<ActionSnapshot, [ClaimRequest]>('retrysafe.claim');
/** A downstream run subscribes to an action it does not own, to wait for its outcome (interlocks). */
export const watchUpdate = defineUpdate<ActionSnapshot, [{ watcher: string }]>('retrysafe.watch');
/** A signed `resolve` decision (policies/signed-decision.ts); unsigned, forged or out-of-scope ones are refused. */
export const resolveUpdate = defineUpdate<ActionSnapshot, [SignedDecision]>('retrysafe.resolve');
/** The action's current snapshot. */
export const statusQuery = defineQuery<ActionSnapshot>('retrysafe.status');
/** Answers once the action has an outcome (OUTCOME_STATUSES), or at once when it already has one. */
export const outcomeUpdate = defineUpdate<ActionSnapshot, []>('retrysafe.outcome');
/**
 * A provider's event about this action (a verified webhook, a settlement), taken as evidence when the outcome is
 * unknown.
 */
export const providerEventSignal = defineSignal<[ProviderEvent]>('retrysafe.providerEvent');
/**
 * The owning run tells a confirmed, compensatable action what became of it: kept (the run finished),
 * compensating (its compensation action was claimed) or compensated (that action was confirmed).
 */
export interface Settlement {
  by: string;
  state: 'kept' | 'compensating' | 'compensated' | 'compensation-failed';
  compensationKey?: string;
}
/** The settlement the owning run sends (see Settlement). */
export const settleSignal = defineSignal<[Settlement]>('retrysafe.settle');
/** Sent by an action to every waiting claimant on each status change. */
export const actionUpdateSignal = defineSignal<[ActionSnapshot]>('retrysafe.actionUpdate');

/**
 * Statuses a waiting run treats as an outcome (it still waits through unknown and needs_review).
 * `compensating` is an operator's decision that the effect must be undone: the run's saga does it.
 */
export const OUTCOME_STATUSES: readonly ActionStatus[] = ['confirmed', 'failed', 'compensated', 'compensating'];

/** The task queue actions and runs use when the worker's configuration names none. */
export const DEFAULT_TASK_QUEUE = 'retrysafe';
/**
 * The action workflow's type name. It carries the engine's major version: a breaking release registers its workflows
 * under new names, so a worker never replays a history its code was not written for (docs/upgrading.md).
 */
export const ACTION_WORKFLOW_TYPE = 'actionWorkflowV3';
