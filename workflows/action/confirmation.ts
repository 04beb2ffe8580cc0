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
 * The approver is answered in the workflow task that takes the approval (no local activity runs in it). Histories
 * recorded before SEND_CHECKS_IN_EXECUTOR_PATCH, and workers without a ledger, re-read trust and limits here, before
 * `dispatching`.
 */
import { condition } from '@temporalio/workflow';
import { buildDryRun } from '../../policies/dry-run';
import { decideAction } from '../../policies/decision-table';
import { amountOf, currencyOf } from '../../policies/tool-facts';
import { CONFIRMATION_WINDOW } from '../../policies/timeouts';
import type { ApprovalToRecheck } from '../../activities/before-send';
import { sendChecksInExecutor, type ActionContext } from './context';
import { awaitReview } from './review';
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

/** What a confirmation clears: the approval the executor checks once more before it sends (none in older runs). */
export interface Cleared {
  approval?: ApprovalToRecheck;
}

/**
 * Dry run, then a verified, signed decision bound to this key and request hash. What it cleared when the action may
 * send; undefined when it must not.
 */
export async function awaitConfirmation(ctx: ActionContext): Promise<Cleared | undefined> {
  const { state, decision: d } = ctx;
  // Asked here, before the wait, so that the marker lands in this task and the task that takes the approval
  // carries no marker and no TemporalChangeVersion upsert. Asked again after the approval below: a replay of a run
  // that recorded it there answers false here (the SDK keeps no answer from a replay that has not reached the
  // marker yet) and true there.
  if (ctx.policy.ledger) sendChecksInExecutor();
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
  // The executor checks against the ledger row whether a send may have begun; without a row, the check stays here.
  if (ctx.policy.ledger && sendChecksInExecutor()) {
    state.approved(by, publicKeyId, claims.expiresAt);
    return { approval: { publicKeyId, expiresAt: claims.expiresAt, by, decisionMode: d.mode } };
  }
  return (await recheckHere(ctx, approval)) ? {} : undefined;
}

/**
 * Older runs, and workers without a ledger: the volatile facts re-read here before acting (the key may have been
 * revoked, the limits changed).
 */
async function recheckHere(ctx: ActionContext, approval: NonNullable<ActionContext['state']['approval']>) {
  const { state, decision: d, input } = ctx;
  const { claims, publicKeyId } = approval;
  const by = claims.operator;
  const fresh = await ctx.activities.loadVolatilePolicy({ tenant: input.tenant });
  if (!fresh.trustedApprovalKeys[publicKeyId]) {
    await state.fail('DecisionRejected', `approval key ${publicKeyId} is no longer trusted; nothing was sent`, { by });
    return false;
  }
  if (Date.parse(claims.expiresAt) <= Date.now()) {
    await state.fail(
      'DecisionRejected',
      `the approval by ${by} expired before the action could start; nothing was sent`,
      {
        by,
      },
    );
    return false;
  }
  const recheck = decideAction(ctx.tool, input.intent, fresh.tenantPolicy);
  if (recheck.mode === 'human-only' && d.mode !== 'human-only') {
    await state.move(
      'needs_review',
      `policy changed since the approval: now ${recheck.mode} (${recheck.reasons.join('; ')})`,
      {
        by,
      },
    );
    if ((await awaitReview(ctx)) !== 'dispatch') return false;
  }
  state.approved(by, publicKeyId, claims.expiresAt);
  return true;
}
