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
import type { ActionInput, ActionSnapshot } from '../messages/action';
import { takeTheRecord } from './action/ledger-claim';
import { act } from './action/dispatch';
import { installActionHandlers } from './action/handlers';
import { checkPolicy, clearToAct } from './action/policy';
import { awaitSettlement } from './action/settlement';
import { ActionState } from './action/state';

/**
 * One action's lifecycle, under its key as workflow ID: policy, the ledger row (the action's only record: this
 * workflow takes it over before it acts), confirmation or review, dispatch and reconciliation, settlement. Export it
 * from your workflow module.
 *
 * The type name carries the engine's major version (ACTION_WORKFLOW_TYPE): histories of another major version are
 * never handed to this code. Within 0.3, compatible changes go behind `patched()`.
 */
export async function actionWorkflowV3(input: ActionInput): Promise<ActionSnapshot> {
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
