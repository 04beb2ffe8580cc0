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
import { condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  checkCeilings,
  raiseCeiling,
  resolveRunCeilings,
  type CeilingVerdict,
  type RaisableCeiling,
  type RunUsage,
} from '../policies/ceilings';
import { countCeilingHit } from './workflow-metrics';
import type { PlannerHistoryEntry } from '../policies/planner-contract';
import { PLAN_RETRY, PLAN_START_TO_CLOSE } from '../policies/timeouts';
import type { SignedDecision } from '../policies/signed-decision';
import { paramsOf } from './signed-decisions';
import { RetrysafeError } from '../policies/errors';
import { SA_STATUS } from '../policies/search-attributes';
import { amountOf } from '../policies/tool-facts';
import {
  agentRunStatusQuery,
  cancelRunUpdate,
  raiseCeilingUpdate,
  resumeRunUpdate,
  type AgentRunInput,
  type AgentRunResult,
  type DecisionRecord,
} from '../messages/run';
import { ActionRun, type CompensationResult } from './action-run';

type Activities = ReturnType<typeof createActivities>;

export type { AgentRunInput, AgentRunResult } from '../messages/run';

/** Invalid model outputs tolerated in a row before a person has to look. */
export const MAX_INVALID_OUTPUTS_IN_A_ROW = 2;

/**
 * An agent run: read, plan (the model's decisions recorded once), check policies and ceilings, act through ActionRun,
 * until the model stops or a person is needed.
 */
export async function agentRunWorkflow(input: AgentRunInput): Promise<AgentRunResult> {
  const run = new ActionRun(input, () => `agent run for ${input.tenant}/${input.eventId}: ${input.goal.slice(0, 80)}`);
  const runId = run.runId;
  const { planNextAction } = proxyActivities<Activities>({
    startToCloseTimeout: PLAN_START_TO_CLOSE,
    retry: PLAN_RETRY,
    summary: `plan: ${input.goal.slice(0, 80)}`,
  });

  let ceilings = resolveRunCeilings(input.ceilings);
  const usage: RunUsage = { steps: 0, spendCents: 0, tokens: 0, sideEffects: 0, startedAtMs: Date.now() };
  const decisions: DecisionRecord[] = [];
  const history: PlannerHistoryEntry[] = [];
  let stage = 'planning';
  let pausedFor: string | undefined;
  let operatorCommand: { kind: 'resume' | 'cancel' | 'raise'; by: string; reason: string } | undefined;

  setHandler(agentRunStatusQuery, () => ({
    stage,
    pausedFor,
    waitingOn: run.waitingOn,
    pendingReplans: run.pendingReplanKeys(),
    usage: { ...usage },
    ceilings,
    decisions: [...decisions],
  }));
  // Operator commands are signed decisions on this run (target = run ID, no request hash), checked against
  // the keys and operator scopes loaded when the run pauses; a refused one never enters history.
  const gate = run.decisions;
  const pausedAndSigned = <D extends 'raise-ceiling' | 'resume' | 'cancel'>(signed: SignedDecision, decision: D) => {
    if (!pausedFor) throw new RetrysafeError('IllegalTransition', `run ${runId} is not paused`, {}).toFailure();
    return paramsOf(gate.verify(signed, { decisions: [decision], key: runId, tenant: input.tenant }), decision);
  };
  setHandler(
    raiseCeilingUpdate,
    (signed) => {
      gate.taken(signed.claims);
      const p = paramsOf(signed.claims, 'raise-ceiling');
      ceilings = raiseCeiling(
        ceilings,
        { ceiling: p.ceiling as RaisableCeiling, newLimit: p.newLimit },
        signed.claims.operator,
      );
      operatorCommand = { kind: 'raise', by: signed.claims.operator, reason: p.reason };
      return ceilings;
    },
    {
      validator: (signed) => {
        const p = pausedAndSigned(signed, 'raise-ceiling');
        // The raise itself must be legal (a known ceiling, not lower than now) before it is accepted.
        try {
          raiseCeiling(
            ceilings,
            { ceiling: p.ceiling as RaisableCeiling, newLimit: p.newLimit },
            signed.claims.operator,
          );
        } catch (err) {
          if (err instanceof RetrysafeError) throw err.toFailure();
          throw err;
        }
      },
    },
  );
  setHandler(
    resumeRunUpdate,
    (signed) => {
      gate.taken(signed.claims);
      operatorCommand = {
        kind: 'resume',
        by: signed.claims.operator,
        reason: paramsOf(signed.claims, 'resume').reason,
      };
      return 'resumed';
    },
    { validator: (signed) => void pausedAndSigned(signed, 'resume') },
  );
  setHandler(
    cancelRunUpdate,
    (signed) => {
      gate.taken(signed.claims);
      operatorCommand = {
        kind: 'cancel',
        by: signed.claims.operator,
        reason: paramsOf(signed.claims, 'cancel').reason,
      };
      return 'cancelled';
    },
    { validator: (signed) => void pausedAndSigned(signed, 'cancel') },
  );

  let invalidInARow = 0;
  for (;;) {
    const modelCheck = checkCeilings(usage, ceilings, Date.now(), { kind: 'model' });
    if (!modelCheck.ok) {
      if ((await pauseAtCeiling(modelCheck)) === 'cancel')
        return end('cancelled', 'cancelled by an operator at a ceiling');
      continue;
    }
    stage = 'planning';
    const recorded = await planNextAction({
      tenant: input.tenant,
      eventId: input.eventId,
      goal: input.goal,
      facts: input.facts,
      history: history.map((h) => ({ ...h, status: run.find(h.key)?.status ?? h.status })),
    });
    usage.steps += 1;
    usage.tokens += recorded.usage.inputTokens + recorded.usage.outputTokens;
    const { decision } = recorded;
    const prepared = decision.kind === 'act' ? await run.prepare(decision.intent) : undefined;
    decisions.push({
      kind: decision.kind,
      modelId: recorded.modelId,
      promptHash: recorded.promptHash,
      toolSchemaVersion: recorded.toolSchemaVersion,
      ...(prepared ? { operation: prepared.tool.name, key: run.keyFor(prepared) } : {}),
    });

    if (decision.kind === 'invalid') {
      invalidInARow += 1;
      if (invalidInARow <= MAX_INVALID_OUTPUTS_IN_A_ROW) continue;
      invalidInARow = 0;
      if (
        (await pause(
          `the planner's output broke the tool schema ${MAX_INVALID_OUTPUTS_IN_A_ROW + 1} times: ${decision.error.field}: ${decision.error.message}`,
        )) === 'cancel'
      ) {
        return end('cancelled', 'cancelled after invalid planner output');
      }
      continue;
    }
    invalidInARow = 0;
    if (decision.kind === 'stop') {
      await run.keepAll();
      return end('done', decision.reason);
    }
    if (decision.kind === 'ask-human') {
      if ((await pause(`the planner asks: ${decision.question}`)) === 'cancel')
        return end('cancelled', "cancelled at the planner's question");
      continue;
    }

    // act: the proposal is checked against the ceilings before anything is claimed.
    const intent = prepared!.intent;
    const { tool } = prepared!;
    const amountCents = amountOf(tool, intent);
    for (;;) {
      const effectCheck: CeilingVerdict = checkCeilings(usage, ceilings, Date.now(), {
        kind: 'effect',
        tool,
        amountCents,
      });
      if (effectCheck.ok) break;
      if ((await pauseAtCeiling(effectCheck)) === 'cancel') return end('cancelled', 'cancelled at a ceiling');
    }
    const isReplan = history.some((h) => h.operation === intent.operation);
    if (!isReplan && run.unresolved().length > 0) {
      // Downstream steps wait while an upstream action of this run is unresolved.
      stage = `waiting for ${run.unresolved()[0].key}`;
      await condition(() => run.unresolved().length === 0);
    }
    usage.sideEffects += 1;
    if (tool.riskClass === 'money-movement' && amountCents !== undefined) usage.spendCents += amountCents;
    stage = `acting: ${intent.operation}`;
    const snap = await run.act(intent, { returnWhenUnresolved: true }, prepared);
    const entry: PlannerHistoryEntry = {
      key: snap.key,
      operation: intent.operation,
      status: snap.status,
      ...(snap.providerRef ? { providerRef: snap.providerRef } : {}),
    };
    const existing = history.findIndex((h) => h.key === snap.key);
    if (existing >= 0) history[existing] = entry;
    else history.push(entry);
    if (snap.status === 'failed' || snap.status === 'compensating') {
      stage = 'compensating';
      const compensations = await run.compensate();
      const stuck = compensations.some((c) => c.status === 'needs_review');
      return end(
        stuck ? 'needs_review' : 'compensated',
        `${snap.key} ended ${snap.status}: ${snap.error?.message ?? ''}`,
        compensations,
      );
    }
  }

  /** Pauses in needs_review at the ceiling the verdict names, counting it (retrysafe_ceilings_hit_total). */
  function pauseAtCeiling(verdict: Extract<CeilingVerdict, { ok: false }>): Promise<'resume' | 'cancel'> {
    countCeilingHit(verdict.ceiling);
    return pause(
      `${verdict.ceiling} ceiling reached (${verdict.value} > ${verdict.limit}): ${verdict.message}; ` +
        `raise '${verdict.raise}' to continue`,
    );
  }

  /** Pauses in needs_review until an operator raises a limit, resumes or cancels. */
  async function pause(reason: string): Promise<'resume' | 'cancel'> {
    await gate.load();
    pausedFor = reason;
    stage = 'needs_review';
    operatorCommand = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: 'needs_review' }]);
    await gate.during(() => condition(() => operatorCommand !== undefined));
    const command = operatorCommand!;
    pausedFor = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: command.kind === 'cancel' ? 'cancelled' : 'running' }]);
    return command.kind === 'cancel' ? 'cancel' : 'resume';
  }

  async function end(
    status: AgentRunResult['status'],
    reason: string,
    compensations?: CompensationResult[],
  ): Promise<AgentRunResult> {
    if (status === 'cancelled') {
      compensations = await run.compensate();
    }
    stage = status;
    upsertSearchAttributes([{ key: SA_STATUS, value: status }]);
    return {
      status,
      reason,
      actions: history.map((h) => ({ ...h, status: run.find(h.key)?.status ?? h.status })),
      decisions,
      usage,
      ...(compensations ? { compensations } : {}),
    };
  }
}
