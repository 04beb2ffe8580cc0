/**
 * One action, one workflow, when someone must decide or wait: a person's confirmation, human-only policy, a saga's
 * undo, an unknown outcome, another claimant. The workflow ID is the action key; the worker's ledger row of the key
 * is the record it takes first (a run's act settles most actions on that row alone, with no workflow at all).
 *
 *   policy ─▶ record ─▶ clearance ─▶ dispatch ⇄ reconciliation ─▶ settlement
 *   (refused  (settled,  (confirmation,  (executor,     (lookups after      (kept | compensated)
 *    ─▶ failed) mismatch,  review,         same key)      the lag, evidence;
 *               taken over) human-only)                   else review)
 *
 *   planned ──▶ [awaiting_confirmation ──signed approval──▶] dispatching ──executor──▶ confirmed
 *                      │ rejected / expired ─▶ failed          │                      │ (compensatable) kept |
 *                                                              │                      │ compensating ─▶ compensated
 *                                                              ├─▶ failed (declined, invalid, nothing committed)
 *                                                              └─▶ unknown ──reconcile──▶ confirmed
 *                                                                     │       provably absent ─▶ dispatching (same key)
 *                                                                     └─▶ needs_review ──operator / late evidence──▶
 *                                                                          confirmed | failed | dispatching | compensating
 *
 * Each phase is a module of workflows/action/; the state and its transitions are in state.ts, the messages in
 * handlers.ts.
 */
import { deprecatePatch } from '@temporalio/workflow';
import type { ActionInput, ActionSnapshot } from '../messages/action';
import { takeTheRecord } from './action/ledger-claim';
import { act } from './action/dispatch';
import { installActionHandlers } from './action/handlers';
import { checkPolicy, clearToAct } from './action/policy';
import { awaitSettlement } from './action/settlement';
import { ActionState } from './action/state';

/**
 * Action workflows recorded by 0.2 claim the key's ledger row first and answer claims only after it. Every history
 * since carries this marker; the path before it, never published, is gone (the call is `deprecatePatch`).
 */
export const LEDGER_IN_WORKER_PATCH = 'ledger-in-worker';
/** Action workflows recorded by 0.2 answer a claim after the results its workflow task brought are applied. */
export const CURRENT_CLAIM_ANSWERS_PATCH = 'current-claim-answers';

/**
 * One action's lifecycle, under its key as workflow ID: policy, the ledger's record, confirmation or review,
 * dispatch and reconciliation, settlement. Export it from your workflow module.
 */
export async function actionWorkflow(input: ActionInput): Promise<ActionSnapshot> {
  deprecatePatch(LEDGER_IN_WORKER_PATCH);
  deprecatePatch(CURRENT_CLAIM_ANSWERS_PATCH);
  const state = new ActionState(input);
  installActionHandlers(state, input);
  const ctx = await checkPolicy(state, input);
  if (!ctx) return state.finish();
  const start = await takeTheRecord(ctx);
  if (start.kind === 'done') return state.finish();
  const first = await clearToAct(ctx, start);
  if (!first) return state.finish();
  await act(ctx, first);
  await awaitSettlement(ctx);
  return state.finish();
}
