/**
 * An agent run: read → plan → check → act, in a loop, with every model decision recorded.
 *
 *   ┌─▶ ceilings ok? ──no──▶ needs_review (operator raises a limit or cancels; the model gets no extra turn)
 *   │     planNextAction (activity: its answer is history; a resumed or replayed run never asks again)
 *   │       invalid ─▶ ask again within the budget, then needs_review
 *   │       ask-human ─▶ needs_review until an operator resumes
 *   │       stop ─▶ keep every compensatable action ─▶ done
 *   │       act ─▶ ceilings for this effect ─▶ earlier steps settled? ─▶ act(intent) (same step, new
 *   │              intent: a new key that waits for its predecessor) ─▶ failed: saga compensation ─▶ end
 *   └──────────────────────────────────────────────┘
 *
 * Several agents may work on one business event (`run:<tenant>:<eventId>:<agent>`): they derive the same
 * keys, so the same proposal from two agents is one action with one owner.
 */
import {
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { runWorkflowId } from '../policies/action-key';
import {
  checkCeilings,
  raiseCeiling,
  resolveRunCeilings,
  type CeilingVerdict,
  type RaisableCeiling,
  type RunCeilingOverrides,
  type RunCeilings,
  type RunUsage,
} from '../policies/ceilings';
import type { Intent } from '../policies/intents';
import type { PlannerHistoryEntry, RecordedDecision } from '../policies/planner-contract';
import { PLAN_RETRY, PLAN_START_TO_CLOSE } from '../policies/timeouts';
import { RetrysafeError } from '../policies/errors';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { contractFor } from '../policies/tool-contracts';
import { act, currentlyWaitingOn, keyFor, knownActions, lookUpAction, pendingReplanKeys, unresolvedActions } from './act';
import type { EffectSnapshot } from './effect-api';
import { Saga, type CompensationResult } from './saga';

type Activities = ReturnType<typeof createActivities>;

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

export interface DecisionRecord {
  kind: RecordedDecision['decision']['kind'];
  modelId: string;
  promptHash: string;
  toolSchemaVersion: string;
  operation?: string;
  key?: string;
}

export interface AgentRunResult {
  status: 'done' | 'stopped' | 'compensated' | 'cancelled' | 'needs_review';
  reason: string;
  actions: PlannerHistoryEntry[];
  decisions: DecisionRecord[];
  usage: RunUsage;
  compensations?: CompensationResult[];
}

export interface AgentRunStatus {
  stage: string;
  pausedFor?: string;
  waitingOn?: string;
  pendingReplans: string[];
  usage: RunUsage;
  ceilings: RunCeilings;
  decisions: DecisionRecord[];
}

export interface OperatorCommand {
  operator: string;
  reason: string;
}

/** Raise a ceiling and let the paused run continue with the step it was about to take. */
export const raiseCeilingUpdate = defineUpdate<RunCeilings, [OperatorCommand & { ceiling: RaisableCeiling; newLimit: number }]>(
  'retrysafe.raiseCeiling',
);
/** Let a run paused by its planner's question (or by invalid output) continue. */
export const resumeRunUpdate = defineUpdate<string, [OperatorCommand]>('retrysafe.resumeRun');
/** End a paused run; its kept actions are compensated. */
export const cancelRunUpdate = defineUpdate<string, [OperatorCommand]>('retrysafe.cancelRun');
export const agentRunStatusQuery = defineQuery<AgentRunStatus>('retrysafe.agentRunStatus');

/** Invalid model outputs tolerated in a row before a person has to look. */
export const MAX_INVALID_OUTPUTS_IN_A_ROW = 2;

export async function agentRunWorkflow(input: AgentRunInput): Promise<AgentRunResult> {
  const runId = runWorkflowId(input.tenant, input.eventId, input.agent);
  if (workflowInfo().workflowId !== runId) {
    throw ApplicationFailure.nonRetryable(`this agent run must run as ${runId}`, 'InvalidIntent');
  }
  const { planNextAction } = proxyActivities<Activities>({
    startToCloseTimeout: PLAN_START_TO_CLOSE,
    retry: PLAN_RETRY,
    summary: `plan: ${input.goal.slice(0, 80)}`,
  });

  let ceilings = resolveRunCeilings(input.ceilings);
  const usage: RunUsage = { steps: 0, spendCents: 0, tokens: 0, sideEffects: 0, startedAtMs: Date.now() };
  const decisions: DecisionRecord[] = [];
  const history: PlannerHistoryEntry[] = [];
  const saga = new Saga();
  let stage = 'planning';
  let pausedFor: string | undefined;
  let operatorCommand: { kind: 'resume' | 'cancel' | 'raise'; by: string; reason: string } | undefined;

  setHandler(agentRunStatusQuery, () => ({
    stage,
    pausedFor,
    waitingOn: currentlyWaitingOn(),
    pendingReplans: pendingReplanKeys(),
    usage: { ...usage },
    ceilings,
    decisions: [...decisions],
  }));
  const pausedOnly = (_cmd?: OperatorCommand) => {
    if (!pausedFor) throw new RetrysafeError('IllegalTransition', `run ${runId} is not paused`, {}).toFailure();
  };
  setHandler(
    raiseCeilingUpdate,
    (cmd) => {
      ceilings = raiseCeiling(ceilings, { ceiling: cmd.ceiling, newLimit: cmd.newLimit }, cmd.operator);
      operatorCommand = { kind: 'raise', by: cmd.operator, reason: cmd.reason };
      return ceilings;
    },
    {
      validator: (cmd) => {
        pausedOnly();
        if (!cmd.operator || !cmd.reason) throw new RetrysafeError('InvalidIntent', 'operator and reason are required', { field: 'operator' }).toFailure();
      },
    },
  );
  setHandler(
    resumeRunUpdate,
    (cmd) => {
      operatorCommand = { kind: 'resume', by: cmd.operator, reason: cmd.reason };
      return 'resumed';
    },
    { validator: pausedOnly },
  );
  setHandler(
    cancelRunUpdate,
    (cmd) => {
      operatorCommand = { kind: 'cancel', by: cmd.operator, reason: cmd.reason };
      return 'cancelled';
    },
    { validator: pausedOnly },
  );
  upsertSearchAttributes([
    { key: SA_KIND, value: 'run' },
    { key: SA_TENANT, value: input.tenant },
    { key: SA_STATUS, value: 'running' },
  ]);

  let invalidInARow = 0;
  for (;;) {
    const modelCheck = checkCeilings(usage, ceilings, Date.now(), { kind: 'model' });
    if (!modelCheck.ok) {
      if ((await pause(ceilingReason(modelCheck))) === 'cancel') return end('cancelled', 'cancelled by an operator at a ceiling');
      continue;
    }
    stage = 'planning';
    const recorded = await planNextAction({
      tenant: input.tenant,
      eventId: input.eventId,
      goal: input.goal,
      facts: input.facts,
      history: history.map((h) => ({ ...h, status: knownActions().find((a) => a.key === h.key)?.status ?? h.status })),
    });
    usage.steps += 1;
    usage.tokens += recorded.usage.inputTokens + recorded.usage.outputTokens;
    const { decision } = recorded;
    decisions.push({
      kind: decision.kind,
      modelId: recorded.modelId,
      promptHash: recorded.promptHash,
      toolSchemaVersion: recorded.toolSchemaVersion,
      ...(decision.kind === 'act' ? { operation: decision.intent.operation, key: keyFor(decision.intent.operation) } : {}),
    });

    if (decision.kind === 'invalid') {
      invalidInARow += 1;
      if (invalidInARow <= MAX_INVALID_OUTPUTS_IN_A_ROW) continue;
      invalidInARow = 0;
      if ((await pause(`the planner's output broke the tool schema ${MAX_INVALID_OUTPUTS_IN_A_ROW + 1} times: ${decision.error.field}: ${decision.error.message}`)) === 'cancel') {
        return end('cancelled', 'cancelled after invalid planner output');
      }
      continue;
    }
    invalidInARow = 0;
    if (decision.kind === 'stop') {
      await saga.keepAll();
      return end('done', decision.reason);
    }
    if (decision.kind === 'ask-human') {
      if ((await pause(`the planner asks: ${decision.question}`)) === 'cancel') return end('cancelled', 'cancelled at the planner\'s question');
      continue;
    }

    // act: the proposal is checked against the ceilings before anything is claimed.
    const intent = decision.intent;
    for (;;) {
      const effectCheck: CeilingVerdict = checkCeilings(usage, ceilings, Date.now(), { kind: 'effect', intent });
      if (effectCheck.ok) break;
      if ((await pause(ceilingReason(effectCheck))) === 'cancel') return end('cancelled', 'cancelled at a ceiling');
    }
    const isReplan = history.some((h) => h.operation === intent.operation);
    if (!isReplan && unresolvedActions().length > 0) {
      // Downstream steps wait while an upstream effect of this run is unresolved.
      stage = `waiting for ${unresolvedActions()[0].key}`;
      await condition(() => unresolvedActions().length === 0);
    }
    registerCompensation(intent);
    usage.sideEffects += 1;
    if ('amountCents' in intent && contractFor(intent.operation).riskClass === 'money-movement') usage.spendCents += intent.amountCents;
    stage = `acting: ${intent.operation}`;
    const snap = await act(intent, { returnWhenUnresolved: true });
    const entry: PlannerHistoryEntry = { key: snap.key, operation: intent.operation, status: snap.status, ...(snap.providerRef ? { providerRef: snap.providerRef } : {}) };
    const existing = history.findIndex((h) => h.key === snap.key);
    if (existing >= 0) history[existing] = entry;
    else history.push(entry);
    if (snap.status === 'failed' || snap.status === 'compensating') {
      stage = 'compensating';
      const compensations = await saga.compensate();
      const stuck = compensations.some((c) => c.status === 'needs_review');
      return end(stuck ? 'needs_review' : 'compensated', `${snap.key} ended ${snap.status}: ${snap.error?.message ?? ''}`, compensations);
    }
  }

  function registerCompensation(intent: Intent): void {
    const key = keyFor(intent.operation);
    if (knownActions().some((a) => a.key === key)) return;
    if (intent.operation === 'charge') {
      saga.addCompensation({
        forKey: key,
        build: async (step: EffectSnapshot | undefined) => {
          const chargeId = step?.providerRef ?? (await lookUpAction(key, intent)).providerRef;
          return chargeId ? { operation: 'refund', chargeId, amountCents: intent.amountCents, merchantReference: intent.merchantReference } : undefined;
        },
      });
    } else if (intent.operation === 'reserve') {
      saga.addCompensation({
        forKey: key,
        build: async (step: EffectSnapshot | undefined) => {
          const reservationId = step?.providerRef ?? (await lookUpAction(key, intent)).providerRef;
          return reservationId ? { operation: 'release', reservationId } : undefined;
        },
      });
    }
  }

  function ceilingReason(verdict: Extract<CeilingVerdict, { ok: false }>): string {
    return `${verdict.ceiling} ceiling reached (${verdict.value} > ${verdict.limit}): ${verdict.message}; raise '${verdict.raise}' to continue`;
  }

  /** Pauses in needs_review until an operator raises a limit, resumes or cancels. */
  async function pause(reason: string): Promise<'resume' | 'cancel'> {
    pausedFor = reason;
    stage = 'needs_review';
    operatorCommand = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: 'needs_review' }]);
    await condition(() => operatorCommand !== undefined);
    const command = operatorCommand!;
    pausedFor = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: command.kind === 'cancel' ? 'cancelled' : 'running' }]);
    return command.kind === 'cancel' ? 'cancel' : 'resume';
  }

  async function end(status: AgentRunResult['status'], reason: string, compensations?: CompensationResult[]): Promise<AgentRunResult> {
    if (status === 'cancelled') {
      compensations = await saga.compensate();
    }
    stage = status;
    upsertSearchAttributes([{ key: SA_STATUS, value: status }]);
    return {
      status,
      reason,
      actions: history.map((h) => ({ ...h, status: knownActions().find((a) => a.key === h.key)?.status ?? h.status })),
      decisions,
      usage,
      ...(compensations ? { compensations } : {}),
    };
  }
}
