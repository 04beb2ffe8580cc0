/**
 * The messages an action workflow takes, each checked before it changes anything: validators refuse what must
 * never enter history (a claim with another request hash, an unsigned or foreign decision), and handlers hand what
 * they accept to the action's state. Nothing here decides the action's course; the phases do.
 */
import { condition, setHandler } from '@temporalio/workflow';
import type { Decision, DecisionClaims, SignedDecision } from '../../policies/signed-decision';
import { RetrysafeError } from '../../policies/errors';
import {
  OUTCOME_STATUSES,
  claimUpdate,
  outcomeUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  watchUpdate,
  type ActionInput,
  type ActionSnapshot,
  type ClaimRequest,
  type OperatorResolution,
} from '../../messages/action';
import { approveUpdate, dryRunQuery } from '../../messages/approval';
import { paramsOf } from '../signed-decisions';
import type { ActionState } from './state';

/** Installs every handler of the action workflow; call it before the workflow's first await. */
export function installActionHandlers(state: ActionState, input: ActionInput): void {
  setHandler(statusQuery, () => state.snapshot());
  state.decisions.acceptRefreshes();
  setHandler(dryRunQuery, () => state.dryRun);
  setHandler(claimUpdate, (req) => answerClaim(state, req), {
    validator: (req) => checkRequestHash(input, req.requestHash),
  });
  setHandler(watchUpdate, async ({ watcher }) => {
    state.watch(watcher);
    await afterThisActivation();
    return state.snapshot();
  });
  setHandler(outcomeUpdate, async () => {
    await condition(() => OUTCOME_STATUSES.includes(state.status));
    return state.snapshot();
  });
  // Evidence only: kept once per event ID (a storm of duplicates is one event), never acted on here.
  setHandler(providerEventSignal, (event) => state.evidence.receive(event));
  setHandler(resolveUpdate, (signed) => applyResolution(state, input, signed), {
    validator: (signed) => checkResolution(state, input, resolutionOf(state, input, signed, true)),
  });
  setHandler(
    approveUpdate,
    async (signed) => {
      state.decisions.taken(signed.claims);
      const { claims } = state.approvalArrives(signed.claims, signed.publicKeyId);
      // A second (double-clicked) approval is answered with the first decision's outcome; it never acts twice.
      await condition(() => state.status !== 'awaiting_confirmation');
      const decision = claims.decision as 'approve' | 'reject';
      return { key: input.key, decision, approver: claims.operator, status: state.status };
    },
    { validator: (signed) => checkApproval(state, input, signed) },
  );
  setHandler(settleSignal, (s) => state.settlementArrives(s));
}

/**
 * A claim: the claimant joins, and is answered once the ledger row was asked about the key, after the results its
 * workflow task brought are applied.
 */
async function answerClaim(state: ActionState, req: ClaimRequest): Promise<ActionSnapshot> {
  state.join(req.claimant, req.notify);
  await condition(() => state.claimsAnswerable);
  state.refuseClaimIfRefused();
  await afterThisActivation();
  return state.snapshot();
}

function checkRequestHash(input: ActionInput, got: unknown): void {
  const { key, requestHash } = input;
  if (got === requestHash) return;
  throw new RetrysafeError(
    'IntentMismatch',
    `action ${key} was claimed with request hash ${requestHash.slice(0, 12)}…; ` +
      `this claim carries ${String(got).slice(0, 12)}…. A changed request needs a new action key.`,
    { key, expected: requestHash, got },
  ).toFailure();
}

function checkApproval(state: ActionState, input: ActionInput, signed: unknown): void {
  if (state.status !== 'awaiting_confirmation' && !state.approval) {
    throw new RetrysafeError('DecisionRejected', `action ${input.key} is ${state.status}, not awaiting confirmation`, {
      reason: 'not-awaiting-confirmation',
    }).toFailure();
  }
  verify(state, input, signed, ['approve', 'reject']);
}

async function applyResolution(state: ActionState, input: ActionInput, signed: SignedDecision) {
  state.decisions.taken(signed.claims);
  const entry = state.resolutionArrives(resolutionOf(state, input, signed));
  await condition(() => entry.answer !== undefined);
  if (entry.answer === 'superseded') {
    throw new RetrysafeError(
      'IllegalTransition',
      `action ${input.key} settled (${state.status}) before this decision could be applied`,
      { status: state.status },
    ).toFailure();
  }
  return state.snapshot();
}

function verify(state: ActionState, input: ActionInput, signed: unknown, decisions: readonly Decision[]) {
  const { key, requestHash, tenant } = input;
  return state.decisions.verify(signed, { decisions, key, tenant, requestHash });
}

/** The resolution a signed `resolve` decision carries; in a validator it is verified first. */
function resolutionOf(state: ActionState, input: ActionInput, signed: SignedDecision, check = false) {
  const claims: DecisionClaims = check ? verify(state, input, signed, ['resolve']) : signed.claims;
  const params = paramsOf(claims, 'resolve');
  const resolution: OperatorResolution = {
    decision: params.outcome,
    operator: claims.operator,
    reason: params.reason,
    ...(params.providerRef ? { providerRef: params.providerRef } : {}),
  };
  return resolution;
}

function checkResolution(state: ActionState, input: ActionInput, resolution: OperatorResolution): void {
  const refuse = (code: 'InvalidIntent' | 'IllegalTransition', message: string, details: Record<string, unknown>) => {
    throw new RetrysafeError(code, message, details).toFailure();
  };
  if (!resolution.operator || !resolution.reason) {
    refuse('InvalidIntent', 'a resolution needs operator and reason', {
      field: resolution.operator ? 'reason' : 'operator',
    });
  }
  if (resolution.decision === 'confirmed' && !resolution.providerRef) {
    refuse('InvalidIntent', 'confirming by hand needs the providerRef seen at the provider', { field: 'providerRef' });
  }
  if (
    state.decisionMode === 'human-only' &&
    (resolution.decision === 'not-happened' || resolution.decision === 'compensate')
  ) {
    refuse(
      'IllegalTransition',
      `action ${input.key} is human-only: the agent never performs it; record what a person did (confirmed with providerRef) or failed`,
      { field: 'decision' },
    );
  }
  if (state.status !== 'needs_review') {
    refuse(
      'IllegalTransition',
      `action ${input.key} is ${state.status}; only an action in needs_review takes an operator's decision`,
      { status: state.status },
    );
  }
}

/**
 * Resolves once every job of the current activation has been applied. A handler runs while its job is processed,
 * before a result that arrived in the same workflow task (an activity's outcome) reaches the code awaiting it;
 * conditions are evaluated after each job and again once the activation's microtasks have run, and the microtask
 * queued here runs only then, so the answer that follows sees what the whole task brought.
 */
function afterThisActivation(): Promise<void> {
  let drained = false;
  void Promise.resolve().then(() => {
    drained = true;
  });
  return condition(() => drained);
}
