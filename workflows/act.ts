/**
 * How a run takes an action: derive the key from the run's workflow ID and the step, normalize and hash
 * the intent, claim the action (one owner across all runs), then wait durably for its outcome. The run
 * waits through `unknown` and `needs_review`: downstream steps never start on an unresolved effect.
 */
import { ApplicationFailure, condition, defineUpdate, getExternalWorkflowHandle, patched, proxyActivities, proxyLocalActivities, sleep, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { actionKeyForStep, parseRunWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import { parseIntent, type Intent } from '../policies/intents';
import { requestHash } from '../policies/request-hash';
import { SA_ACTION_KEYS, SA_WAITING_ON } from '../policies/search-attributes';
import { contractFor, summarizeIntent } from '../policies/tool-contracts';
import { CLAIM_RETRY, CLAIM_START_TO_CLOSE, READ_START_TO_CLOSE } from '../policies/timeouts';
import { OUTCOME_STATUSES, actionUpdateSignal, settleSignal, type EffectSnapshot, type Settlement } from './effect-api';

type Activities = ReturnType<typeof createActivities>;

/** Patch ID: claims moved from a regular to a local activity (older histories keep replaying; see test/replay). */
export const PATCH_LOCAL_CLAIM = 'claim-local-activity';

const actions = new Map<string, EffectSnapshot>();
/** Per step: the keys of its revisions, oldest first, with their request hashes (the persisted intents). */
const steps = new Map<string, Array<{ key: string; requestHash: string }>>();
/** Keys of re-planned actions an operator allowed to run despite an unresolved or confirmed predecessor. */
const acceptedRisks = new Map<string, RiskAcceptance>();
let waitingOn: string | undefined;
let handlerInstalled = false;

export interface RiskAcceptance {
  key: string;
  operator: string;
  reason: string;
}

/** An authorized operator lets a re-planned action run although its predecessor is unresolved or confirmed. */
export const acceptRiskUpdate = defineUpdate<{ accepted: string }, [RiskAcceptance]>('retrysafe.acceptRisk');

function installHandler(): void {
  if (handlerInstalled) return;
  handlerInstalled = true;
  setHandler(actionUpdateSignal, (snap) => {
    const known = actions.get(snap.key);
    // Snapshots only grow their audit trail; an older one arriving late must not win.
    if (!known || snap.audit.length >= known.audit.length) actions.set(snap.key, snap);
  });
  setHandler(
    acceptRiskUpdate,
    (acceptance) => {
      acceptedRisks.set(acceptance.key, acceptance);
      return { accepted: acceptance.key };
    },
    {
      validator: (acceptance) => {
        if (!acceptance.operator || !acceptance.reason) {
          throw new RetrysafeError('InvalidIntent', 'accepting a risk needs operator and reason', {
            field: acceptance.operator ? 'reason' : 'operator',
          }).toFailure();
        }
        if (!pendingReplans.has(acceptance.key)) {
          throw new RetrysafeError('InvalidIntent', `no re-planned action ${acceptance.key} is waiting in this run`, { field: 'key' }).toFailure();
        }
      },
    },
  );
}

const pendingReplans = new Set<string>();

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
  /**
   * This action undoes another (saga). A permanent failure then waits in needs_review for a person
   * instead of failing, because nothing may try a second, different undo on its own.
   */
  compensation?: boolean;
  /**
   * Return as soon as the action is unknown or in needs_review instead of waiting for its outcome, so an
   * agent can re-read and re-plan. Its other steps must still wait (see `unresolvedActions`).
   */
  returnWhenUnresolved?: boolean;
}

/** Statuses that mean "may or may not have happened, nobody knows yet". */
export const UNRESOLVED_STATUSES = ['planned', 'awaiting_confirmation', 'dispatching', 'unknown', 'needs_review'] as const;

/** This run's actions whose outcome is not known yet; a downstream step must wait for them. */
export function unresolvedActions(): EffectSnapshot[] {
  return [...actions.values()].filter((a) => (UNRESOLVED_STATUSES as readonly string[]).includes(a.status));
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
  const stepName = `${runId}/${options.stepId ?? rawIntent.operation}`;
  const revisions = steps.get(stepName) ?? [];
  try {
    intent = parseIntent(rawIntent);
    hash = requestHash(intent, contractFor(intent.operation).secretFields);
    const same = revisions.find((r) => r.requestHash === hash);
    const stepId = same || revisions.length === 0 ? options.stepId : `${options.stepId ?? intent.operation}-r${revisions.length + 1}`;
    key = same?.key ?? keyFor(intent.operation, { ...options, stepId, runWorkflowId: runId });
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
  if (!revisions.some((r) => r.key === key)) {
    const previous = revisions[revisions.length - 1];
    steps.set(stepName, [...revisions, { key, requestHash: hash }]);
    if (previous) await guardReplan(previous.key, key);
  }
  const { tenant } = parseRunWorkflowId(runId);
  // The claim only talks to Temporal and is idempotent, so it runs as a local activity inside this workflow
  // task: no activity task round trip, and a worker that dies mid-claim costs a workflow task timeout (3 s),
  // not the claim's start-to-close. Histories from before the change scheduled a regular activity.
  const claimOptions = { startToCloseTimeout: CLAIM_START_TO_CLOSE, retry: CLAIM_RETRY, summary: `claim ${key}: ${summarizeIntent(intent)}` };
  const { claimAction } = patched(PATCH_LOCAL_CLAIM) ? proxyLocalActivities<Activities>(claimOptions) : proxyActivities<Activities>(claimOptions);
  const self = workflowInfo().workflowId;
  upsertSearchAttributes([{ key: SA_ACTION_KEYS, value: [...new Set([...actions.keys(), key])] }]);
  const claimed = await claimAction({
    effect: { key, intent, requestHash: hash, tenant, owner: self, ...(options.compensation ? { compensation: true } : {}) },
    claim: { requestHash: hash, claimant: self, notify: self },
  });
  const known = actions.get(key);
  if (!known || claimed.audit.length >= known.audit.length) actions.set(key, claimed);

  const settled = () =>
    OUTCOME_STATUSES.includes(actions.get(key)!.status) ||
    (options.returnWhenUnresolved === true && ['unknown', 'needs_review'].includes(actions.get(key)!.status));
  if (!settled()) {
    waitingOn = key;
    upsertSearchAttributes([{ key: SA_WAITING_ON, value: key }]);
    await condition(settled);
    waitingOn = undefined;
    upsertSearchAttributes([{ key: SA_WAITING_ON, value: null }]);
  }
  return actions.get(key)!;
}

/**
 * A re-plan produced a materially different intent for a step that already has an action. The new
 * action has its own key; it may run only once the previous one is known not to have happened
 * (failed or compensated), or when an authorized operator accepts the risk of a second effect.
 */
async function guardReplan(previousKey: string, newKey: string): Promise<void> {
  const previous = () => actions.get(previousKey)?.status;
  const safe = () => previous() === 'failed' || previous() === 'compensated';
  if (safe()) return;
  pendingReplans.add(newKey);
  waitingOn = previousKey;
  upsertSearchAttributes([{ key: SA_WAITING_ON, value: previousKey }]);
  await condition(() => safe() || acceptedRisks.has(newKey));
  pendingReplans.delete(newKey);
  waitingOn = undefined;
  upsertSearchAttributes([{ key: SA_WAITING_ON, value: null }]);
}

/** Re-planned actions waiting for their predecessor or an operator's acceptance. */
export function pendingReplanKeys(): string[] {
  return [...pendingReplans];
}

/**
 * Waits, durably, until an upstream action owned by another run reaches an outcome. The wait is visible
 * as this run's RetrysafeWaitingOn search attribute and in its status query. Never claims the action.
 */
export async function awaitUpstream(key: string): Promise<EffectSnapshot> {
  installHandler();
  const { watchAction } = proxyActivities<Activities>({
    startToCloseTimeout: CLAIM_START_TO_CLOSE,
    // The upstream run may not have claimed its action yet: keep asking, slowly, for up to a day.
    scheduleToCloseTimeout: '24h',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
    summary: `wait for ${key}`,
  });
  waitingOn = key;
  upsertSearchAttributes([{ key: SA_WAITING_ON, value: key }]);
  const seen = await watchAction({ key, watcher: workflowInfo().workflowId });
  const known = actions.get(key);
  if (!known || seen.audit.length >= known.audit.length) actions.set(key, seen);
  await condition(() => OUTCOME_STATUSES.includes(actions.get(key)!.status));
  waitingOn = undefined;
  upsertSearchAttributes([{ key: SA_WAITING_ON, value: null }]);
  return actions.get(key)!;
}

/**
 * Asks the provider whether an action's effect exists (waiting out the contract's read lag first), for
 * compensations of steps whose outcome the run never learned.
 */
export async function lookUpAction(key: string, intent: Intent): Promise<{ found: boolean; providerRef?: string }> {
  const { lookupEffect } = proxyActivities<Activities>({ startToCloseTimeout: READ_START_TO_CLOSE, summary: `look up ${key}` });
  await sleep(contractFor(intent.operation).readAfterWriteLagMs);
  const result = await lookupEffect({ key, intent: parseIntent(intent) });
  return { found: result.found, ...(result.providerRef ? { providerRef: result.providerRef } : {}) };
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
/**
 * Only the action's owner (its first claimant) settles it: another agent that proposed the same action
 * shares its outcome but does not decide whether it is kept or undone. An action that already closed
 * (settled, or past its compensation window) needs no word from anyone.
 */
export async function settle(key: string, settlement: Omit<Settlement, 'by'>): Promise<void> {
  const self = workflowInfo().workflowId;
  const known = actions.get(key);
  if (known && known.owner !== self) return;
  try {
    await getExternalWorkflowHandle(key).signal(settleSignal, { by: self, ...settlement });
  } catch (err) {
    if ((err as { type?: string }).type === 'ExternalWorkflowExecutionNotFound' || /not found/i.test((err as Error).message)) return;
    throw err;
  }
}

/** Whether this run owns the action (it claimed it first), and so decides on its compensation. */
export function ownsAction(key: string): boolean {
  const known = actions.get(key);
  return !known || known.owner === workflowInfo().workflowId;
}
