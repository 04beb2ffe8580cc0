/**
 * `retrysafe/workflow`: what workflow code imports. A run takes its actions through an {@link ActionRun}; the
 * engine's own workflows are re-exported here so that a worker's workflow module can export them beside the
 * application's (`export { actionWorkflowV3, agentRunWorkflowV3 } from 'retrysafe/workflow'`). Everything here is
 * deterministic and safe inside the workflow sandbox.
 *
 * @packageDocumentation
 */
export { ActionRun, UNRESOLVED_STATUSES } from '../workflows/action-run';
export type { ActOptions } from '../workflows/action-run';
export type { DecisionGate } from '../workflows/signed-decisions';
export type { PreparedAction } from '../activities/prepare-action';
export { actionWorkflowV3 } from '../workflows/action';
export { agentRunWorkflowV3, MAX_INVALID_OUTPUTS_IN_A_ROW } from '../workflows/agent-run';

// The messages of action and run workflows, for workflows that signal, query or update them.
export {
  actionUpdateSignal,
  claimUpdate,
  ACTION_WORKFLOW_TYPE,
  DEFAULT_TASK_QUEUE,
  OUTCOME_STATUSES,
  outcomeUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  watchUpdate,
} from '../messages/action';
export type {
  ActionInput,
  ActionSnapshot,
  AuditEntry,
  ClaimRequest,
  DispatchOutcome,
  ExecutionReport,
  EventConflict,
  OperatorResolution,
  ProviderEvent,
  ReconciliationCheck,
  RecordedRequest,
  Settlement,
} from '../messages/action';
export {
  acceptRiskUpdate,
  AGENT_RUN_WORKFLOW_TYPE,
  agentRunStatusQuery,
  cancelRunUpdate,
  raiseCeilingUpdate,
  resumeRunUpdate,
  runStatusQuery,
} from '../messages/run';
export type {
  AgentRunInput,
  AgentRunResult,
  AgentRunStatus,
  CompensationResult,
  DecisionRecord,
  OperatorCommand,
  RiskAcceptance,
  RunStatus,
} from '../messages/run';
export { approveUpdate, dryRunQuery } from '../messages/approval';

// Pure helpers that workflow code may call.
export { actionKeyForStep, parseActionKey, parseRunWorkflowId, runWorkflowId } from '../policies/action-key';
export { canonicalJson, requestHash } from '../policies/request-hash';
export { ACTION_STATUSES, FINAL_STATUSES } from '../policies/action-status';
export type { ActionStatus } from '../policies/action-status';
export { errorCodeOf, errorDetailsOf, RetrysafeError } from '../policies/errors';
export type { ErrorCode } from '../policies/errors';
export type { Intent, Json } from '../policies/tool';
export {
  DEFAULT_DEADLINE_MS,
  DEFAULT_MAX_SIDE_EFFECTS,
  DEFAULT_MAX_SPEND_CENTS,
  DEFAULT_MAX_STEPS,
  DEFAULT_RUN_CEILINGS,
} from '../policies/ceilings';
export type { RunCeilingOverrides, RunCeilings, RunUsage } from '../policies/ceilings';
export {
  DISPATCH_HEARTBEAT_TIMEOUT,
  DISPATCH_RETRY,
  DISPATCH_SCHEDULE_TO_CLOSE,
  DISPATCH_START_TO_CLOSE,
  WORKFLOW_TASK_TIMEOUT,
} from '../policies/timeouts';
