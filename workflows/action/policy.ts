/**
 * The policy phase: the worker's registry and policy vouch for the intent (or it is refused before anything is
 * sent), then decide who lets it through: nobody (automatic), a person's signed confirmation, or a person only.
 */
import type { ApprovalToRecheck } from '../../activities/before-send';
import type { ActionPolicy } from '../../activities/load-action-policy';
import { decideAction } from '../../policies/decision-table';
import { errorCodeOf } from '../../policies/errors';
import type { ActionInput } from '../../messages/action';
import { actionActivities, causeMessage, policyActivities, type ActionContext, type DispatchMode } from './context';
import { awaitConfirmation, showDryRun } from './confirmation';
import type { Start } from './ledger-claim';
import { awaitReview } from './review';
import type { ActionState } from './state';

/** Where acting begins: by dispatching (in a mode), or, taken over from a run's act that may have sent, by reconciling. */
export interface FirstStep {
  mode: DispatchMode;
  next: 'dispatch' | 'reconcile';
  /** The approval the first dispatch acts on, for the executor to check once more before it sends. */
  approval?: ApprovalToRecheck;
}

/** Loads what the worker says of this request; undefined when it refused it (the action failed, nothing was sent). */
export async function checkPolicy(state: ActionState, input: ActionInput): Promise<ActionContext | undefined> {
  let policy: ActionPolicy;
  try {
    policy = await policyActivities(input).loadActionPolicy({
      tenant: input.tenant,
      key: input.key,
      intent: input.intent,
      requestHash: input.requestHash,
    });
  } catch (err) {
    // An intent this worker cannot vouch for (unknown tool, forged hash, a key of another tool) is never sent.
    const message = causeMessage(err);
    const error = { code: errorCodeOf(err) ?? 'InvalidIntent', message };
    await state.move('failed', `refused before sending: ${message}`, { error });
    return undefined;
  }
  state.applyPolicy({
    summary: policy.summary,
    preview: policy.preview,
    trust: { keys: policy.trustedApprovalKeys, operators: policy.operators },
  });
  const decision = decideAction(policy.tool, input.intent, policy.tenantPolicy);
  return { input, state, policy, tool: policy.tool, decision, activities: actionActivities(input, policy) };
}

/**
 * Who clears the action to act, given how its record was taken: a run's act that may have sent (reconcile first), a
 * key the ledger held unresolved (a person says whether it happened), human-only (a person does it), a person's
 * confirmation, or nobody. Undefined when the action must not act (it ended, or a person took it).
 */
export async function clearToAct(ctx: ActionContext, start: Start): Promise<FirstStep | undefined> {
  const { state, decision } = ctx;
  state.decide(decision.mode);
  if (start.kind === 'taken-over') {
    // The run's act sent with the key, or may have, and could not learn the outcome (or stopped holding the row):
    // the row's `dispatching` stands, and what happened is found out by evidence and lookups, as for any unknown.
    const h = start.from;
    await state.move('dispatching', `dispatched by the run's act (${h.holder}); the row said ${h.status} at ${h.at}`);
    state.beginDispatch();
    state.dispatchEnded();
    await state.move('unknown', `taken over from the run's act, whose outcome is unknown: reconciling`);
    return { mode: 'maybe-sent', next: 'reconcile' };
  }
  if (start.kind === 'recovered') {
    // The ledger held this key unresolved and its workflow is gone: whether it happened is unknown, and only a
    // person may say. Their signed resolution binds this exact request, so "did not happen" clears one resend
    // with the same key (never for an action the agent may not perform).
    const r = start.recovered;
    await state.move(
      'needs_review',
      `recovered from the ledger: its workflow is gone and the ledger held it as ${r.status}` +
        `${r.providerRef ? ` (${r.providerRef})` : ''} at ${r.at}; a person decides whether it happened`,
    );
    if ((await awaitReview(ctx)) !== 'dispatch' || decision.mode === 'human-only') return undefined;
    return { mode: 'operator-cleared', next: 'dispatch' };
  }
  if (decision.mode === 'human-only') {
    // Above the limits one approval click is not enough scrutiny: the agent never performs this action. A person
    // does it (or decides it must not happen) and records the outcome here.
    showDryRun(ctx);
    await state.move('needs_review', `human-only: ${decision.reasons.join('; ') || decision.rows.join(', ')}`);
    await awaitReview(ctx);
    return undefined;
  }
  if (decision.mode !== 'confirm') return { mode: 'first', next: 'dispatch' };
  const cleared = await awaitConfirmation(ctx);
  return cleared && { mode: 'first', next: 'dispatch', ...cleared };
}
