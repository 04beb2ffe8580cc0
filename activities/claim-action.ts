import { Context } from '@temporalio/activity';
import { RetrysafeError } from '../policies/errors';
import { HEARTBEAT_INTERVAL_MS } from '../policies/timeouts';
import type { ActionSnapshot } from '../messages/action';
import { claimAction, type ClaimActionInput, type ClaimDeps } from '../transport/claim-action';

// The claim itself is the client's as much as the activities': it lives in transport/, which loads no activity code.
export { auditTrailOf, claimAction, snapshotFromLedger, within } from '../transport/claim-action';
export type { ClaimActionInput, ClaimDeps } from '../transport/claim-action';

/** The activity form: typed errors leave as non-retryable ApplicationFailures. */
export function createClaimActionActivity(deps: ClaimDeps) {
  return async function claimActionActivity(input: ClaimActionInput): Promise<ActionSnapshot> {
    const ctx = Context.current();
    ctx.log.info('claim', { key: input.action.key, claimant: input.claim.claimant });
    // As an activity (not local), the claim heartbeats while the action workflow takes its time to answer.
    const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
    try {
      return await claimAction(deps, input);
    } catch (err) {
      if (err instanceof RetrysafeError) throw err.toFailure();
      throw err;
    } finally {
      if (beat) clearInterval(beat);
    }
  };
}
