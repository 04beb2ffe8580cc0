import type { Intent } from '../policies/tool-registry';
import { keyAtStep, type StepRevision } from '../policies/action-key';
import type { ActOnRecordInput, ActOnRecordResult } from './act-on-record';
import type { PreparedAction } from './prepare-action';

export interface PrepareAndActInput {
  /** The intent as the run proposes it; prepared here as `prepareAction` does. */
  intent: Intent;
  tenant: string;
  /** The run's workflow ID: with the step, the key's parts. */
  runId: string;
  /** The run's name for the step; the tool's name when absent. */
  step?: string;
  /**
   * The keys the run gave the step so far, under the step's name as the run expected it (`step`, or the intent's
   * operation). A prepared tool whose name puts the intent at another step is left to the run.
   */
  revisions: Record<string, StepRevision[]>;
  owner: string;
  token: ActOnRecordInput['token'];
  generation: ActOnRecordInput['generation'];
}

/**
 * The prepared intent, and the act's key and verdict when it acted. Without `acted` the run goes on from `prepared`:
 * `deferred` says why (a tool with long calls acts in an activity; a re-plan waits for the step's previous action).
 */
export interface PrepareAndActResult {
  prepared: PreparedAction;
  acted?: { key: string; verdict: ActOnRecordResult };
  deferred?: 'long-calls' | 're-plan' | 'another-step';
}

/**
 * A run's act with its preparation, in one local activity: validate, normalize and hash the intent, derive its key
 * from the step's revisions, then act on the row. One local activity (and one marker) fewer per action than preparing
 * apart, and the act still sees exactly the action the run records (the run derives the same key from the same
 * prepared intent and fails if they differ).
 */
export function createPrepareAndAct(deps: {
  prepareAction: (input: { intent: unknown; tenant?: string }) => Promise<PreparedAction>;
  actOnRecord: (input: ActOnRecordInput) => Promise<ActOnRecordResult>;
}) {
  return async function prepareAndAct(input: PrepareAndActInput): Promise<PrepareAndActResult> {
    const prepared = await deps.prepareAction({ intent: input.intent, tenant: input.tenant });
    const step = input.step ?? prepared.tool.name;
    const revisions = input.revisions[step];
    if (!revisions) return { prepared, deferred: 'another-step' };
    if (prepared.tool.longCalls) return { prepared, deferred: 'long-calls' };
    const at = keyAtStep(input.runId, prepared.tool, step, revisions, prepared.requestHash);
    if (at.replans) return { prepared, deferred: 're-plan' };
    const verdict = await deps.actOnRecord({
      action: {
        key: at.key,
        intent: prepared.intent,
        requestHash: prepared.requestHash,
        tenant: input.tenant,
        owner: input.owner,
      },
      token: input.token,
      generation: input.generation,
    });
    return { prepared, acted: { key: at.key, verdict } };
  };
}
