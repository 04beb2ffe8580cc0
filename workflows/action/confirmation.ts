/**
 * The confirmation phase: the exact effect is shown (the dry run), and the action waits for a person's signed
 * decision bound to its key and request hash. An approval counts only if its key is still trusted when the action is
 * about to send, it has not expired, and the policy did not turn the action human-only meanwhile.
 *
 *   dry run ─▶ awaiting_confirmation ─┬─ no decision in the window ─▶ failed
 *                                     ├─ rejected ─▶ failed
 *                                     └─ approved ─▶ dispatch, the approval handed to the executor, which re-reads
 *                                                    trust and limits before it sends (activities/before-send.ts):
 *                                                    key revoked / expired ─▶ failed; now human-only ─▶ needs_review
 *
 * The approver is answered in the workflow task that takes the approval (no local activity runs in it).
 */
import { condition } from '@temporalio/workflow';
import { buildDryRun } from '../../policies/dry-run';
import { amountOf, currencyOf } from '../../policies/tool-facts';
import { CONFIRMATION_WINDOW } from '../../policies/timeouts';
import type { ApprovalToRecheck } from '../../activities/before-send';
import type { ActionContext } from './context';
import { nowIso } from './state';

/** Shows the person what exactly would happen: operation, target, amount, the request hash it binds. */
export function showDryRun(ctx: ActionContext): void {
  const { input, tool, policy, decision, state } = ctx;
  const amountCents = amountOf(tool, input.intent);
  const currency = currencyOf(tool, input.intent);
  const facts = {
    operation: tool.name,
    summary: policy.summary,
    preview: policy.preview,
    ...policy.dryRun,
    ...(amountCents !== undefined ? { amountCents } : {}),
    ...(currency ? { currency } : {}),
  };
  state.showDryRun(buildDryRun(input.key, facts, input.requestHash, decision, nowIso()), decision.mode);
}

/** What a confirmation clears: the approval the executor checks once more before it sends. */
export interface Cleared {
  approval: ApprovalToRecheck;
}

/**
 * Dry run, then a verified, signed decision bound to this key and request hash. What it cleared when the action may
 * send; undefined when it must not.
 */
export async function awaitConfirmation(ctx: ActionContext): Promise<Cleared | undefined> {
  const { state, decision: d } = ctx;
  // Before the status says it waits: the approval's own workflow task then only verifies.
  state.decisions.prepare();
  showDryRun(ctx);
  await state.move('awaiting_confirmation', `${d.mode}: ${d.reasons.join('; ') || d.rows.join(', ')}`);
  const decided = await state.decisions.during(() =>
    condition(() => state.approval !== undefined, CONFIRMATION_WINDOW),
  );
  const approval = state.approval;
  if (!decided || !approval) {
    await state.fail(
      'DecisionRejected',
      'no verified confirmation arrived within the confirmation window; nothing was sent',
    );
    return undefined;
  }
  const { claims, publicKeyId } = approval;
  const by = claims.operator;
  if (claims.decision === 'reject') {
    await state.fail('DecisionRejected', `rejected by ${by}; nothing was sent`, { by });
    return undefined;
  }
  // The executor checks the approval once more (trust, expiry, the tenant's policy) just before it sends, while the
  // ledger row shows that nothing of this dispatch was sent: the task that takes the approval runs no activity.
  state.approved(by, publicKeyId, claims.expiresAt);
  return { approval: { publicKeyId, expiresAt: claims.expiresAt, by, decisionMode: d.mode } };
}
