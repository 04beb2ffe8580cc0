import { Context } from '@temporalio/activity';
import { RetrysafeError } from '../policies/errors';
import { requestLogIn } from '../policies/provider-requests';
import { CLAIM_START_TO_CLOSE, HEARTBEAT_INTERVAL_MS } from '../policies/timeouts';
import { msToNumber } from '@temporalio/common/lib/time';
import { dispatchReportSignal, type ClaimAnswer, type DispatchReport } from '../messages/action';
import { claimAction, within, type ClaimActionInput, type ClaimDeps } from './claim-action';
import { executionReport, type ExecuteInput, type ExecuteOutcome } from './execute-action';

/** How long one attempt waits for the action to answer its claim: well inside its start-to-close. */
const CLAIM_WAIT_MS = msToNumber(CLAIM_START_TO_CLOSE);

export interface ClaimAndSendInput extends ClaimActionInput {
  claim: ClaimActionInput['claim'] & { send: { token: string } };
}

export interface ClaimAndSendResult {
  claimed: ClaimAnswer;
  /** Present when the claim granted this owner the first dispatch: what it sent, as reported to the action. */
  report?: DispatchReport;
}

export interface ClaimAndSendDeps extends ClaimDeps {
  execute: (input: ExecuteInput) => Promise<ExecuteOutcome>;
}

/**
 * The owner's shorter path, in one activity: claim the action asking to send its first dispatch, and
 * when the action grants it, call the executor with the key here, then report the result to the action
 * by signal and return it. The run continues on this activity's result alone; the action workflow
 * applies the report and stays the record, the owner for other claimants, and the reconciler.
 *
 *   claim (update-with-start, send) ─▶ not granted ─▶ the answer (the action sends, or it is settled)
 *                                  └─▶ granted ─▶ executor (key, attempt rules) ─▶ report ─▶ the answer + report
 *
 * An attempt that dies anywhere is retried by Temporal: the claim is idempotent, and a grant not yet
 * reported is granted again to the newest attempt of this activity's token. When an earlier answer already
 * said "send", the executor's rules for an attempt after the first apply (idempotent resend, lookup, or
 * unknown; never a blind resend); when none did, nothing can have been sent and this attempt sends as the
 * first. A typed refusal from the executor is a verdict and is reported; any other error leaves the attempt
 * to Temporal's retry.
 */
export function createClaimAndSendActivity(deps: ClaimAndSendDeps) {
  return async function claimAndSend(input: ClaimAndSendInput): Promise<ClaimAndSendResult> {
    const ctx = Context.current();
    const { action, claim } = input;
    ctx.log.info('claim and send', { key: action.key, claimant: claim.claimant, attempt: ctx.info.attempt });
    // While it claims, the activity heartbeats what earlier attempts recorded of their requests, unchanged.
    const carried = requestLogIn(ctx.info.heartbeatDetails);
    const beat = setInterval(() => ctx.heartbeat(carried), HEARTBEAT_INTERVAL_MS);
    let claimed: ClaimAnswer;
    try {
      // A claim held up past its deadline, or an attempt the server has given up on (its heartbeat answered
      // so), stops waiting: the next attempt claims again, and only the newest attempt is granted the send.
      claimed = await within(
        Promise.race([
          claimAction(deps, { action, claim: { ...claim, send: { ...claim.send, attempt: ctx.info.attempt } } }),
          ctx.cancelled,
        ]),
        CLAIM_WAIT_MS,
        `the claim of ${action.key} was not answered within ${CLAIM_WAIT_MS} ms`,
      );
    } catch (err) {
      if (err instanceof RetrysafeError) throw err.toFailure();
      throw err;
    } finally {
      clearInterval(beat);
    }
    if (!claimed.sendGranted) return { claimed };
    if (ctx.cancellationSignal.aborted) throw new Error(`attempt ${ctx.info.attempt} was cancelled before it sent`);

    const report = await executionReport(() =>
      deps.execute({
        key: action.key,
        intent: action.intent,
        requestHash: action.requestHash,
        mode: 'first',
        ...(claimed.firstGrant ? { earlierAttemptsUnsent: true } : {}),
      }),
    );
    await deps.client.workflow.getHandle(action.key).signal(dispatchReportSignal, { token: claim.send.token, report });
    return { claimed, report };
  };
}
