/**
 * `retrysafe/workflow`: what workflow code imports. A run takes its actions through an {@link ActionRun}; the
 * engine's own workflows are re-exported here so that a worker's workflow module can export them beside the
 * application's (`export { actionWorkflowV3, agentRunWorkflowV3 } from 'retrysafe/workflow'`). Everything here is
 * deterministic and safe inside the workflow sandbox.
 *
 * @packageDocumentation
 */
export { ActionRun, UNRESOLVED_STATUSES, toolRefs } from '../workflows/action-run';
export type { ActOptions, ToolRef, ToolRefs } from '../workflows/action-run';
export type { DecisionGate } from '../workflows/signed-decisions';
export type { SignedDecision } from '../policies/signed-decision';
export type { PreparedAction } from '../activities/prepare-action';
export { actionWorkflowV3 } from '../workflows/action';
export { agentRunWorkflowV3 } from '../workflows/agent-run';

// What a workflow (or a client) may send to, or ask of, action and run workflows.
export { outcomeUpdate, providerEventSignal, resolveUpdate, statusQuery } from '../messages/action';
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
export { requestHash } from '../policies/request-hash';
export { ACTION_STATUSES, FINAL_STATUSES } from '../policies/action-status';
export type { ActionStatus } from '../policies/action-status';
export { errorCodeOf, errorDetailsOf, isRetrysafeError, RetrysafeError } from '../policies/errors';
export type { ErrorCode } from '../policies/errors';
export type { Intent, Json } from '../policies/tool';
export { DEFAULT_RUN_CEILINGS } from '../policies/ceilings';
export type { RunCeilingOverrides, RunCeilings, RunUsage } from '../policies/ceilings';
