/**
 * `retrysafe`: what application and tool code imports. Define a tool (its input schema, how it talks to its
 * provider, and what its provider can do about retries), answer with one of four outcomes, and claim actions with
 * the client; keys, request hashes and typed errors come with it. Workflow code imports `retrysafe/workflow`;
 * a worker's entry point imports `retrysafe/worker`.
 *
 * @packageDocumentation
 */

// ── tools ──
export { defineTool, DEDUPE_CAPABILITIES, RISK_CLASSES, withToolDefaults } from '../policies/tool';
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
export { createToolRegistry, MAX_INTENT_BYTES } from '../policies/tool-registry';
export type { ParseIntentOptions, ToolRegistry } from '../policies/tool-registry';
export { DEFAULT_AUTO_APPROVE_BELOW_CENTS, DEFAULT_HUMAN_ONLY_ABOVE_CENTS } from '../policies/tenant-policy';
export { allIssues, firstIssue } from '../policies/zod-issues';
export type { FieldIssue } from '../policies/zod-issues';
export type { DecisionMode, PolicyDecision } from '../policies/decision-table';

// ── outcomes, and what HTTP answers mean ──
export {
  absent,
  ambiguous,
  committed,
  found,
  notCommitted,
  NOT_COMMITTED_STATUSES,
  outcomeOfStatus,
  rejected,
} from '../policies/tool-outcome';
export type { LookupAnswer, RejectionReason, StatusRules, ToolOutcome } from '../policies/tool-outcome';
export {
  errorCodeFromBody,
  errorMessageFromBody,
  outcomeOfError,
  outcomeOfResponse,
  providerRequest,
  ProviderTransportError,
} from '../transport/http';
export type { ProviderRequest, ProviderResponse } from '../transport/http';
export { HEARTBEAT_INTERVAL_MS, PROVIDER_REQUEST_TIMEOUT_MS } from '../policies/timeouts';

// ── the client ──
export { RetrysafeClient, submitDecision, typedRefusal, TRUST_REFRESH_WAIT_MS } from '../client';
export type { ActionFilter, ActionListing, RetrysafeClientOptions } from '../client';
export { connectClient, loadConnectConfig } from '../client/connect';
export {
  checkStackSettings,
  declareStackSettings,
  readStackSettings,
  StackSettingsMismatch,
  stackSettingsMismatch,
} from '../client/stack-settings';
export type { OwnSettings, StackSettings, WorkflowService } from '../client/stack-settings';

// ── keys, hashes, errors ──
export {
  actionKeyForStep,
  formatActionKey,
  KEY_DELIMITER,
  MAX_KEY_LENGTH,
  parseActionKey,
  parseRunWorkflowId,
  runWorkflowId,
} from '../policies/action-key';
export type { ActionKeyParts } from '../policies/action-key';
export { canonicalJson, requestHash, shortHash } from '../policies/request-hash';
export { ERROR_CODES, errorCodeOf, errorDetailsOf, isErrorCode, RetrysafeError } from '../policies/errors';
export type { ErrorCode } from '../policies/errors';

// ── an action, as clients and operators see it ──
export { ACTION_STATUSES, FINAL_STATUSES } from '../policies/action-status';
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
export type { ProviderRequest as RecordedProviderRequest } from '../policies/provider-requests';
export {
  SA_ACTION_KEYS,
  SA_KIND,
  SA_OPERATION,
  SA_PROVIDER_REF,
  SA_REFERENCE,
  SA_STATUS,
  SA_TENANT,
  SA_WAITING_ON,
  SEARCH_ATTRIBUTE_REGISTRATIONS,
} from '../policies/search-attributes';

// ── signed decisions: what the approval service signs and every workflow verifies ──
export {
  approvalKeyId,
  approvalPublicKey,
  decisionClaims,
  DECISION_REJECTION_REASONS,
  DECISIONS,
  DEFAULT_APPROVAL_TTL_MS,
  ROLES,
  signDecision,
  signDecisionWith,
} from '../policies/signed-decision';
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
