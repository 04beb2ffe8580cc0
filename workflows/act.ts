/**
 * How a run takes an action: derive the key from the run's workflow ID and the step, normalize and hash
 * the intent, claim the action (one owner across all runs), then wait durably for its outcome. The run
 * waits through `unknown` and `needs_review`: downstream steps never start on an unresolved effect.
 */
import { ApplicationFailure, condition, getExternalWorkflowHandle, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { actionKeyForStep, parseRunWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import { parseIntent, type Intent } from '../policies/intents';
import { requestHash } from '../policies/request-hash';
import { SA_ACTION_KEYS, SA_WAITING_ON } from '../policies/search-attributes';
import { contractFor, summarizeIntent } from '../policies/tool-contracts';
import { CLAIM_RETRY, CLAIM_START_TO_CLOSE } from '../policies/timeouts';
import { OUTCOME_STATUSES, actionUpdateSignal, settleSignal, type EffectSnapshot, type Settlement } from './effect-api';

type Activities = ReturnType<typeof createActivities>;

const actions = new Map<string, EffectSnapshot>();
let waitingOn: string | undefined;
let handlerInstalled = false;

function installHandler(): void {
  if (handlerInstalled) return;
  handlerInstalled = true;
  setHandler(actionUpdateSignal, (snap) => {
    const known = actions.get(snap.key);
    // Snapshots only grow their audit trail; an older one arriving late must not win.
    if (!known || snap.audit.length >= known.audit.length) actions.set(snap.key, snap);
  });
}

/** The actions this run has claimed so far, by key, with their latest known status. */
export function knownActions(): EffectSnapshot[] {
  return [...actions.values()];
}

export function currentlyWaitingOn(): string | undefined {
  return waitingOn;
}

export interface ActOptions {
  /** Distinguishes two actions of one operation in one run (e.g. two emails). */
  stepId?: string;
  /** Derive the key from another run ID (a child agent acting for its parent's business event). */
  runWorkflowId?: string;
}

/** Computes the key an intent would get in this run, without claiming anything. */
export function keyFor(operation: Intent['operation'], options: ActOptions = {}): string {
  const runId = options.runWorkflowId ?? workflowInfo().workflowId;
  return actionKeyForStep(runId, { operation, version: contractFor(operation).version, stepId: options.stepId });
}

/**
 * Claims the action for `intent` and resolves with its snapshot once it reaches an outcome
 * (confirmed, failed or compensated). Throws a non-retryable failure for invalid intents and mismatches.
 */
export async function act(rawIntent: Intent, options: ActOptions = {}): Promise<EffectSnapshot> {
  installHandler();
  const runId = options.runWorkflowId ?? workflowInfo().workflowId;
  let intent: Intent;
  let key: string;
  let hash: string;
  try {
    intent = parseIntent(rawIntent);
    key = keyFor(intent.operation, { ...options, runWorkflowId: runId });
    hash = requestHash(intent, contractFor(intent.operation).secretFields);
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
  const { tenant } = parseRunWorkflowId(runId);
  const { claimAction } = proxyActivities<Activities>({
    startToCloseTimeout: CLAIM_START_TO_CLOSE,
    retry: CLAIM_RETRY,
    summary: `claim ${key}: ${summarizeIntent(intent)}`,
  });
  const self = workflowInfo().workflowId;
  upsertSearchAttributes([{ key: SA_ACTION_KEYS, value: [...new Set([...actions.keys(), key])] }]);
  const claimed = await claimAction({
    effect: { key, intent, requestHash: hash, tenant, owner: self },
    claim: { requestHash: hash, claimant: self, notify: self },
  });
  const known = actions.get(key);
  if (!known || claimed.audit.length >= known.audit.length) actions.set(key, claimed);

  const settled = () => OUTCOME_STATUSES.includes(actions.get(key)!.status);
  if (!settled()) {
    waitingOn = key;
    upsertSearchAttributes([{ key: SA_WAITING_ON, value: key }]);
    await condition(settled);
    waitingOn = undefined;
    upsertSearchAttributes([{ key: SA_WAITING_ON, value: null }]);
  }
  return actions.get(key)!;
}

/** Like `act`, but a failed action becomes a typed, non-retryable workflow failure. */
export async function actOrThrow(intent: Intent, options: ActOptions = {}): Promise<EffectSnapshot> {
  const snap = await act(intent, options);
  if (snap.status !== 'confirmed') {
    throw ApplicationFailure.create({
      type: snap.error?.code ?? 'BusinessRejected',
      message: `${snap.key} ${snap.status}: ${snap.error?.message ?? 'no detail'}`,
      nonRetryable: true,
      details: [{ key: snap.key, status: snap.status }],
    });
  }
  return snap;
}

/** Tells a confirmed, compensatable action what became of it (kept, compensating, compensated). */
export async function settle(key: string, settlement: Omit<Settlement, 'by'>): Promise<void> {
  await getExternalWorkflowHandle(key).signal(settleSignal, { by: workflowInfo().workflowId, ...settlement });
}
