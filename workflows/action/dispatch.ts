/**
 * The dispatch phase: the executor sends with the key (activities/execute-action.ts decides what a retried attempt
 * may do), and an unknown outcome is reconciled, resent with the same key only once absence is proven and the
 * contract allows it, or left to a person.
 *
 *   dispatching ─▶ executor ─┬─ confirmed | failed ─▶ done
 *        ▲                   ├─ the approval's policy changed meanwhile (nothing sent) ─▶ needs_review ─▶ a person
 *        ▲                   └─ unknown ─▶ reconcile ─┬─ confirmed ─▶ done
 *        │                                            ├─ absent, a key makes a resend safe, budget left ─┐
 *        │                                            └─ otherwise ─▶ needs_review ─▶ a person decides   │
 *        └──────────────────────────── same key (maybe-sent, or operator-cleared) ◀─────────────────────┘
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { errorCodeOf, errorDetailsOf } from '../../policies/errors';
import { requestLogIn } from '../../policies/provider-requests';
import { DISPATCH_RETRY, MAX_REDISPATCHES } from '../../policies/timeouts';
import type { DispatchOutcome } from '../../messages/action';
import { reportedMove } from '../../messages/execution-report';
import type { ApprovalToRecheck } from '../../activities/before-send';
import { causeMessage, type ActionContext, type DispatchMode } from './context';
import type { FirstStep } from './policy';
import { reconcile } from './reconciliation';
import { awaitReview } from './review';

/** How a dispatch ended; `review` when the executor found the approval's policy changed and sent nothing. */
type Verdict = 'confirmed' | 'failed' | 'unknown' | 'review';

/** Dispatches until the action has an outcome or a person took it over. */
export async function act(ctx: ActionContext, first: FirstStep): Promise<void> {
  const { state, tool } = ctx;
  let { mode, next, approval } = first;
  for (;;) {
    if (next === 'dispatch') {
      const reason =
        mode === 'first'
          ? 'dispatch'
          : mode === 'operator-cleared'
            ? 'dispatch after an operator cleared it'
            : 'redispatch with the same key';
      // The executor writes `dispatching` to the ledger row itself, just before its first request.
      await state.move('dispatching', reason, { byExecutor: true });
      const verdict = await dispatch(ctx, mode, approval);
      // A person reviewed it or it was sent: the approval is not checked again.
      approval = undefined;
      if (verdict === 'review' && (await awaitReview(ctx)) === 'dispatch') continue;
      if (verdict !== 'unknown') return;
    }
    next = 'dispatch';
    // Unknown: reconcile by evidence and lookups; resend only when absence is proven and the contract allows it.
    const found = await reconcile(ctx);
    if (found === 'confirmed') return;
    if (found === 'absent' && tool.dedupe !== 'none' && state.dispatches <= MAX_REDISPATCHES) {
      mode = 'maybe-sent';
      continue;
    }
    await state.move(
      'needs_review',
      found === 'absent'
        ? 'provably absent, but the redispatch budget is spent'
        : 'reconciliation could not establish the outcome',
    );
    if ((await awaitReview(ctx)) !== 'dispatch') return;
    mode = 'operator-cleared';
  }
}

/**
 * One dispatch by the executor, with the approval to check once more and the ledger entry to write before it sends.
 */
async function dispatch(ctx: ActionContext, mode: DispatchMode, approval?: ApprovalToRecheck): Promise<Verdict> {
  const { state, input } = ctx;
  state.beginDispatch();
  try {
    const { key, intent, requestHash } = input;
    const record = state.executorRecord;
    if (!record) throw new Error(`action ${key}: no ledger entry was handed to the executor`);
    const outcome = await ctx.activities.executeAction({
      key,
      intent,
      requestHash,
      mode,
      record,
      ...(approval ? { approval } : {}),
    });
    state.executorAnswered();
    return await applyOutcome(ctx, outcome);
  } catch (err) {
    state.dispatchEnded();
    const verdict = executorVerdict(err);
    if (verdict) state.executorAnswered();
    // A failure says what was sent too: in its details (a rejection), or in the last heartbeat (a timeout).
    const timedOut = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
    state.recordRequests(
      requestLogIn(timedOut ? (err.cause as TimeoutFailure).lastHeartbeatDetails : errorDetailsOf(err)),
    );
    const message = causeMessage(err);
    // The executor may fail an attempt by itself (its ledger unreachable): retries that ran out end unknown too.
    if (err instanceof ActivityFailure && !verdict) {
      // Timed out or retries exhausted without a verdict from the executor: the provider may have committed.
      await state.move('unknown', `dispatch ended without an outcome: ${message}`);
      return 'unknown';
    }
    const code = errorCodeOf(err) ?? 'OutcomeUnknown';
    if (code === 'PolicyChanged') {
      // The executor re-read the tenant's policy before sending: the approval is not enough any more.
      await state.move('needs_review', message, approval ? { by: approval.by } : {});
      return 'review';
    }
    if (input.compensation) return undoFailed(ctx, code, message);
    await state.fail(code, `${code}: ${message}`);
    return 'failed';
  }
}

/**
 * The executor's own refusal (typed, not retried), which it decides either before its entry is written (the checks)
 * or after a send was recorded: as opposed to an attempt that died, or retries that ran out.
 */
function executorVerdict(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure)) return false;
  return cause.nonRetryable || (DISPATCH_RETRY.nonRetryableErrorTypes ?? []).includes(cause.type ?? '');
}

/** A failed undo is not the end of the story: a person decides what to do, nothing retries by itself. */
async function undoFailed(ctx: ActionContext, code: string, message: string): Promise<Verdict> {
  const { state } = ctx;
  await state.move('needs_review', `compensation failed permanently: ${code}: ${message}`, {
    error: { code, message },
  });
  if ((await awaitReview(ctx)) !== 'dispatch') return state.status === 'confirmed' ? 'confirmed' : 'failed';
  await state.move('dispatching', 'dispatch after an operator cleared it', { byExecutor: true });
  return dispatch(ctx, 'operator-cleared');
}

async function applyOutcome(ctx: ActionContext, outcome: DispatchOutcome): Promise<Verdict> {
  const { state } = ctx;
  state.recordRequests(outcome);
  state.dispatchEnded();
  const move = reportedMove({ kind: 'outcome', outcome });
  const found = outcome.status === 'confirmed' ? { providerRef: outcome.providerRef, record: outcome.record } : {};
  await state.move(move.to, move.reason, found);
  return outcome.status;
}
