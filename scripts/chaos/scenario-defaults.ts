import { exampleRegistry } from '../../examples/tools';
import { retrying, waitForActionStatus } from './observe';
import type { ChaosScenario, IterationContext } from './types';
import { actionKeyForStep, runWorkflowId, type ActionSnapshot, type Intent, type RetrysafeClient } from 'retrysafe';

/** Shared pieces of the scenarios: the usual crash and fault mixes, and a claim that waits out crashes. */

/** The key application code gets for an action claimed by `claimAction` (no step ID). */
export function claimedActionKey(ctx: Pick<IterationContext, 'tenant' | 'eventId'>, operation: string): string {
  return actionKeyForStep(runWorkflowId(ctx.tenant, ctx.eventId), {
    operation,
    version: exampleRegistry().get(operation).version,
  });
}

/** Statuses a claimed action stops at until someone acts: the end of the watch. */
export const RESTING_STATUSES = ['confirmed', 'failed', 'needs_review', 'compensated'] as const;

/** Every dangerous point of a keyed provider call, weighted towards the two that follow a commit. */
export const KEYED_CALL_MODES: ChaosScenario['modes'] = [
  ['before-send', 2],
  ['in-flight', 3],
  ['after-commit', 3],
  ['gateway-error', 1],
  ['random-time', 2],
];

/**
 * A run's keyed call: the points above, and the record-first path's own (the run's act holding the ledger row; the
 * verdict not yet on the row; the row settled, the act's workflow task not yet recorded). Workers without the ledger never reach the latter; the harness then kills at the end.
 */
export const RUN_CALL_MODES: ChaosScenario['modes'] = [
  ...KEYED_CALL_MODES,
  ['after-row-claimed', 2],
  ['before-row-settles', 3],
  ['after-row-settled', 2],
  ['stalled-owner', 2],
];

/** Before-commit faults a keyed provider call must ride through: half the calls see none. */
export const TRANSIENT_FAULTS: ChaosScenario['faultPool'] = [
  ['none', 4],
  ['status-5xx', 1],
  ['status-429', 1],
  ['reset', 1],
  ['delay', 1],
];

/**
 * Claims an action as application code does, under the iteration's run ID, retrying through worker crashes
 * and server restarts until the iteration's deadline. A typed refusal (a mismatch) is final. `client` is the
 * iteration's example client unless the scenario's tools are others (a real server's).
 */
export function claimThroughCrashes(
  ctx: IterationContext,
  intent: Intent,
  client: Pick<RetrysafeClient, 'claimAction'> = ctx.retrysafe,
): Promise<ActionSnapshot> {
  return retrying(() => client.claimAction({ tenant: ctx.tenant, eventId: ctx.eventId }, intent), {
    budgetMs: Number.POSITIVE_INFINITY,
    signal: ctx.signal,
  });
}

/** What happened to the signed approval of an action that may need one. */
export interface ApprovalAttempt {
  /** When the first approval left the harness; undefined when the action never asked for one. */
  sentAtMs?: number;
  /** The action accepted the approval (its update returned). */
  accepted: boolean;
}

/**
 * Claims the action and, when the decision table sends it to awaiting_confirmation, approves its exact
 * request hash as a person would. The approval is an update: while the worker is dead it waits for the
 * successor, and a retried approval is the same one.
 */
export async function claimAndApprove(ctx: IterationContext, key: string, intent: Intent): Promise<ApprovalAttempt> {
  const claimed = await claimThroughCrashes(ctx, intent);
  const waiting = await waitForActionStatus(
    ctx.client,
    key,
    ['awaiting_confirmation', ...RESTING_STATUSES],
    ctx.signal,
  );
  if (waiting?.status !== 'awaiting_confirmation') return { accepted: false };
  const sentAtMs = Date.now();
  await retrying(() => ctx.approver.approve(ctx.client, key, claimed.requestHash), {
    budgetMs: Number.POSITIVE_INFINITY,
    signal: ctx.signal,
  });
  return { sentAtMs, accepted: true };
}
