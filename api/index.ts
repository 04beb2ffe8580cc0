/**
 * `retrysafe`: what application and tool code imports. Define a tool (its input schema, how it talks to its
 * provider, and what its provider can do about retries), answer with one of four outcomes, and claim actions with
 * the client; keys, request hashes and typed errors come with it. Workflow code imports `retrysafe/workflow`;
 * a worker's entry point imports `retrysafe/worker`.
 *
 * @packageDocumentation
 */

// ── tools ──
export { defineTool, DEDUPE_CAPABILITIES } from '../policies/tool';
export type {
  AnyTool,
  Compensation,
  DedupeCapability,
  DryRunDescription,
  Intent,
  IntentOf,
  Json,
  RiskClass,
  ToolContext,
  ToolDefinition,
  ToolDescriptor,
  ToolSpec,
  DefaultedField,
} from '../policies/tool';
export { createToolRegistry } from '../policies/tool-registry';
export type { ParseIntentOptions, ToolRegistry } from '../policies/tool-registry';
export { DEFAULT_AUTO_APPROVE_BELOW_CENTS, DEFAULT_HUMAN_ONLY_ABOVE_CENTS } from '../policies/tenant-policy';
export { firstIssue } from '../policies/zod-issues';
export type { FieldIssue } from '../policies/zod-issues';
export type { DecisionMode, PolicyDecision } from '../policies/decision-table';

// ── outcomes, and what HTTP answers mean ──
export { absent, ambiguous, committed, found, notCommitted, outcomeOfStatus, rejected } from '../policies/tool-outcome';
export type { LookupAnswer, RejectionReason, StatusRules, ToolOutcome } from '../policies/tool-outcome';
export { errorCodeFromBody, outcomeOfError, outcomeOfResponse, providerRequest } from '../transport/http';
export type { ProviderRequest, ProviderResponse } from '../transport/http';
export { HEARTBEAT_INTERVAL_MS, PROVIDER_REQUEST_TIMEOUT_MS } from '../policies/timeouts';

// ── the client ──
export { RetrysafeClient } from '../client';
export type {
  ActionFilter,
  ActionListing,
  RetrysafeClientOptions,
  RunWorkflow,
  StartedRun,
  StartRunOptions,
} from '../client';
export { connectClient } from '../client/connect';

// ── keys, hashes, errors ──
export { actionKeyForStep, parseActionKey, runWorkflowId } from '../policies/action-key';
export type { ActionKeyParts } from '../policies/action-key';
export { canonicalJson, requestHash } from '../policies/request-hash';
export { ERROR_CODES, errorCodeOf, errorDetailsOf, isRetrysafeError, RetrysafeError } from '../policies/errors';
export type { ErrorCode } from '../policies/errors';

// ── an action, as clients and operators see it ──
export { ACTION_STATUSES } from '../policies/action-status';
export type { ActionStatus } from '../policies/action-status';
export { DEFAULT_TASK_QUEUE, OUTCOME_STATUSES } from '../messages/action';
export type {
  ActionInput,
  ActionSnapshot,
  AuditEntry,
  EventConflict,
  OperatorResolution,
  ProviderEvent,
  ReconciliationCheck,
  RecordedRequest,
} from '../messages/action';
export type { RequestLogEntry } from '../policies/provider-requests';
export { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../policies/search-attributes';

// ── signed decisions: what the approval service signs and every workflow verifies ──
export { approvalKeyId, decisionClaims, signDecision, signDecisionWith } from '../policies/signed-decision';
export type {
  Decision,
  DecisionClaims,
  DecisionTrust,
  ExpectedDecision,
  OperatorScopes,
  Role,
  SignedDecision,
} from '../policies/signed-decision';
export type { ApprovalOutcome, DryRun } from '../messages/approval';
