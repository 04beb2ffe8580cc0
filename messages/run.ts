/**
 * The public surface of run workflows: the status every run answers, and the operator commands of
 * agent runs. Clients, the ops CLI and tests import these definitions; workflows/ implements them.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { RunCeilingOverrides, RunCeilings, RunUsage } from '../policies/ceilings';
import type { SignedDecision } from '../policies/signed-decision';
import type { PlannerHistoryEntry } from '../policies/planner-contract';
import type { ActionSnapshot } from './action';

/** A run's state: its stage, what it waits on, and its actions. */
export interface RunStatus {
  stage: string;
  waitingOn?: string;
  actions: Array<Pick<ActionSnapshot, 'key' | 'status' | 'summary' | 'providerRef'>>;
}

/** The agent run workflow's type name, versioned like ACTION_WORKFLOW_TYPE (messages/action.ts). */
export const AGENT_RUN_WORKFLOW_TYPE = 'agentRunWorkflowV3';
/** Every run built on ActionRun answers this: its stage, what it waits for, and its actions. */
export const runStatusQuery = defineQuery<RunStatus>('retrysafe.runStatus');

/**
 * An operator's signed acceptance that a re-planned action may run although its predecessor is unresolved or confirmed.
 */
export interface RiskAcceptance {
  key: string;
  operator: string;
  reason: string;
}

/**
 * An authorized operator lets a re-planned action run although its predecessor is unresolved or
 * confirmed: a signed `accept-risk` decision whose key is the re-planned action's key.
 */
export const acceptRiskUpdate = defineUpdate<{ accepted: string }, [SignedDecision]>('retrysafe.acceptRisk');

/** A signed operator command as the run records it: who and why. */
export interface OperatorCommand {
  operator: string;
  reason: string;
}

/**
 * One model decision as recorded in history (never regenerated on replay): what it chose, with which model and prompt
 * hash.
 */
export interface DecisionRecord {
  kind: 'act' | 'stop' | 'ask-human' | 'invalid';
  modelId: string;
  promptHash: string;
  toolSchemaVersion: string;
  operation?: string;
  key?: string;
}

/** An agent run's state for operators: stage, why it is paused, usage against ceilings, and its recorded decisions. */
export interface AgentRunStatus {
  stage: string;
  pausedFor?: string;
  waitingOn?: string;
  pendingReplans: string[];
  usage: RunUsage;
  ceilings: RunCeilings;
  decisions: DecisionRecord[];
}

/** Raise a ceiling and let the paused run continue with the step it was about to take. */
export const raiseCeilingUpdate = defineUpdate<RunCeilings, [SignedDecision]>('retrysafe.raiseCeiling');
/** Let a run paused by its planner's question (or by invalid output) continue. */
export const resumeRunUpdate = defineUpdate<string, [SignedDecision]>('retrysafe.resumeRun');
/** End a paused run; its kept actions are compensated. */
export const cancelRunUpdate = defineUpdate<string, [SignedDecision]>('retrysafe.cancelRun');
/** An agent run's current status. */
export const agentRunStatusQuery = defineQuery<AgentRunStatus>('retrysafe.agentRunStatus');

/** Compensations a run ran, by the key each undoes. */
export interface CompensationResult {
  forKey: string;
  compensationKey?: string;
  status: 'compensated' | 'nothing-to-undo' | 'left-to-owner' | 'needs_review';
}

/**
 * What starts an agent run: tenant, business event, the goal, the facts the model plans from, and ceiling overrides.
 */
export interface AgentRunInput {
  tenant: string;
  eventId: string;
  /** Name of this agent when several work on one event. */
  agent?: string;
  goal: string;
  /** Facts gathered by reads before the run (the order, the customer, policy context). */
  facts: Record<string, unknown>;
  ceilings?: RunCeilingOverrides;
}

/** How an agent run ended, why, and the actions and compensations it made. */
export interface AgentRunResult {
  status: 'done' | 'stopped' | 'compensated' | 'cancelled' | 'needs_review';
  reason: string;
  actions: PlannerHistoryEntry[];
  decisions: DecisionRecord[];
  usage: RunUsage;
  compensations?: CompensationResult[];
}
