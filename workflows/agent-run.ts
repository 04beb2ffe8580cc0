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
import { condition, proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { PreparedAction } from '../activities/prepare-action';
import { PLAN_RETRY, PLAN_START_TO_CLOSE } from '../policies/timeouts';
import { amountOf } from '../policies/tool-facts';
import type { AgentRunInput, AgentRunResult } from '../messages/run';
import { ActionRun } from './action-run';
import { AgentState } from './agent/state';

type Activities = ReturnType<typeof createActivities>;

export type { AgentRunInput, AgentRunResult } from '../messages/run';

/** Invalid model outputs tolerated in a row before a person has to look. */
export const MAX_INVALID_OUTPUTS_IN_A_ROW = 2;

/**
 * An agent run: read, plan (the model's decisions recorded once), check policies and ceilings, act through ActionRun,
 * until the model stops or a person is needed.
 */
export async function agentRunWorkflowV3(input: AgentRunInput): Promise<AgentRunResult> {
  const run = new ActionRun(input, () => `agent run for ${input.tenant}/${input.eventId}: ${input.goal.slice(0, 80)}`);
  const { planNextAction } = proxyActivities<Activities>({
    startToCloseTimeout: PLAN_START_TO_CLOSE,
    retry: PLAN_RETRY,
    summary: `plan: ${input.goal.slice(0, 80)}`,
  });
  const agent = new AgentState(input, run);
  let invalidInARow = 0;
  for (;;) {
    if (!(await agent.withinCeilings({ kind: 'model' }))) {
      return agent.end('cancelled', 'cancelled by an operator at a ceiling');
    }
    agent.setStage('planning');
    const { tenant, eventId, goal, facts } = input;
    const recorded = await planNextAction({ tenant, eventId, goal, facts, history: agent.actions() });
    const { decision } = recorded;
    const prepared = decision.kind === 'act' ? await run.prepare(decision.intent) : undefined;
    agent.planned(
      {
        kind: decision.kind,
        modelId: recorded.modelId,
        promptHash: recorded.promptHash,
        toolSchemaVersion: recorded.toolSchemaVersion,
        ...(prepared ? { operation: prepared.tool.name, key: run.keyFor(prepared) } : {}),
      },
      recorded.usage.inputTokens + recorded.usage.outputTokens,
    );
    if (decision.kind === 'invalid') {
      invalidInARow += 1;
      if (invalidInARow <= MAX_INVALID_OUTPUTS_IN_A_ROW) continue;
      invalidInARow = 0;
      const why = `the planner's output broke the tool schema ${MAX_INVALID_OUTPUTS_IN_A_ROW + 1} times`;
      if ((await agent.pause(`${why}: ${decision.error.field}: ${decision.error.message}`)) === 'cancel') {
        return agent.end('cancelled', 'cancelled after invalid planner output');
      }
      continue;
    }
    invalidInARow = 0;
    if (decision.kind === 'stop') {
      await run.keepAll();
      return agent.end('done', decision.reason);
    }
    if (decision.kind === 'ask-human') {
      if ((await agent.pause(`the planner asks: ${decision.question}`)) === 'cancel')
        return agent.end('cancelled', "cancelled at the planner's question");
      continue;
    }
    const ended = await actOnProposal(run, agent, prepared!);
    if (ended) return ended;
  }
}

/**
 * The model proposed an action: checked against the ceilings before anything is claimed, then taken once every
 * earlier step is settled (a re-plan of a step waits for its predecessor inside `act`). A failed action ends the run
 * with its saga's compensations; otherwise the loop plans again.
 */
async function actOnProposal(
  run: ActionRun,
  agent: AgentState,
  prepared: PreparedAction,
): Promise<AgentRunResult | undefined> {
  const { intent, tool } = prepared;
  const amountCents = amountOf(tool, intent);
  if (!(await agent.withinCeilings({ kind: 'effect', tool, amountCents }))) {
    return agent.end('cancelled', 'cancelled at a ceiling');
  }
  if (!agent.tookBefore(intent.operation) && run.unresolved().length > 0) {
    // Downstream steps wait while an upstream action of this run is unresolved.
    agent.setStage(`waiting for ${run.unresolved()[0].key}`);
    await condition(() => run.unresolved().length === 0);
  }
  agent.effectTaken(amountCents, tool.riskClass === 'money-movement');
  agent.setStage(`acting: ${intent.operation}`);
  const snap = await run.actIntent(intent, { returnWhenUnresolved: true }, prepared);
  agent.acted(snap, intent.operation);
  if (snap.status !== 'failed' && snap.status !== 'compensating') return undefined;
  agent.setStage('compensating');
  const compensations = await run.compensate();
  const stuck = compensations.some((c) => c.status === 'needs_review');
  const reason = `${snap.key} ended ${snap.status}: ${snap.error?.message ?? ''}`;
  return agent.end(stuck ? 'needs_review' : 'compensated', reason, compensations);
}
