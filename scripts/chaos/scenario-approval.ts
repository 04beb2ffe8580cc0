import type { ChargeIntent } from '../../examples/tools';
import { actionState, recordsWhere, retrying, rootMessage, waitForActionStatus, type ActionState } from './observe';
import {
  RESTING_STATUSES,
  TRANSIENT_FAULTS,
  claimAndApprove,
  claimedActionKey,
  type ApprovalAttempt,
} from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';
import type { ActionSnapshot } from 'retrysafe';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, DEFAULT_HUMAN_ONLY_ABOVE_CENTS } from 'retrysafe';

/**
 * A charge large enough that the decision table asks a person: the action waits in awaiting_confirmation
 * until a signed approval of its exact request hash arrives, then charges with its key. The worker dies
 * around the approval (random-time kills land while it waits or just after it is approved) and at the
 * charge's dangerous points. Expected: one charge after exactly one verified approval, never before it;
 * a declined card ends `failed` with nothing charged.
 */

/** Between the automatic and the human-only thresholds: confirmation, not review. */
const AMOUNT_CENTS = Math.round((DEFAULT_AUTO_APPROVE_BELOW_CENTS + DEFAULT_HUMAN_ONLY_ABOVE_CENTS) / 8);

function start(ctx: IterationContext): StartedWork {
  const merchantReference = `AP-${ctx.eventId}`;
  const intent: ChargeIntent = {
    operation: 'charge',
    amountCents: AMOUNT_CENTS,
    currency: 'usd',
    customerId: 'cus_chaos',
    paymentMethod: 'pm_chaos',
    merchantReference,
  };
  const key = claimedActionKey(ctx, 'charge');
  let claimError: Error | undefined;
  let approval: ApprovalAttempt = { accepted: false };
  let reached: ActionState | undefined;

  const settled = (async () => {
    try {
      approval = await claimAndApprove(ctx, key, intent);
    } catch (err) {
      claimError = err as Error;
      return;
    }
    reached = await waitForActionStatus(ctx.client, key, RESTING_STATUSES, ctx.signal);
  })();

  return {
    settled,
    async verify(): Promise<Tally> {
      const charges = recordsWhere(await ctx.providers.payments.ledger(), 'charges', { merchantReference });
      const state = reached ?? (await actionState(ctx.client, key, ctx.stack.ledger));
      const snapshot = await retrying(() => ctx.retrysafe.getAction(key), { budgetMs: 15_000 }).catch(() => undefined);
      const status = claimError ? 'claim-failed' : (state?.status ?? 'absent');
      const declined = ctx.plan.declined && status === 'failed';
      const expected = declined ? 0 : 1;
      const unexplained: string[] = [];
      if (claimError) unexplained.push(`claim failed: ${rootMessage(claimError)}`);
      else if (status !== 'confirmed' && !declined) unexplained.push(`${key} ended ${status}`);
      if (!claimError) unexplained.push(...approvalProblems(snapshot, approval, charges));
      return {
        outcome: declined ? 'declined' : status,
        expectedEffects: expected,
        actualEffects: charges.length,
        duplicates: Math.max(0, charges.length - 1),
        lost: Math.max(0, expected - charges.length),
        unknown: status === 'unknown' ? 1 : 0,
        needsReview: status === 'needs_review' ? 1 : 0,
        unexplained,
        notes: [`action ${key}`, `charges ${charges.map((c) => c.id).join(', ') || 'none'}`],
      };
    },
  };
}

/**
 * The action's audit must show it waited for a confirmation and accepted exactly one, naming the approver;
 * and no charge may have been committed before the first approval left the harness.
 */
export function approvalProblems(
  snapshot: ActionSnapshot | undefined,
  approval: ApprovalAttempt,
  charges: ReadonlyArray<Record<string, unknown>>,
): string[] {
  if (!snapshot) return ['the action could not be read to check its approval'];
  const problems: string[] = [];
  if (!snapshot.audit.some((a) => a.to === 'awaiting_confirmation')) problems.push('never waited for a confirmation');
  const approvals = snapshot.audit.filter((a) => a.reason.startsWith('approved ('));
  if (approvals.length > 1) problems.push(`accepted ${approvals.length} approvals`);
  if (charges.length > 0 && (approvals.length === 0 || !snapshot.approvedBy))
    problems.push('charged without a recorded approval');
  if (charges.length > 0 && !approval.accepted) problems.push('charged, yet the approval was never accepted');
  const early = charges.filter(
    (c) => approval.sentAtMs === undefined || Date.parse(String(c.committedAt)) < approval.sentAtMs,
  );
  if (early.length)
    problems.push(`charge ${early.map((c) => c.id).join(', ')} was committed before any approval was sent`);
  return problems;
}

export const approvalScenario: ChaosScenario = {
  name: 'approval',
  summary: `charge of ${AMOUNT_CENTS} cents that needs a signed approval; kills around the approval and the charge`,
  operation: 'charge',
  providers: ['payments'],
  modes: [
    ['before-send', 2],
    ['in-flight', 2],
    ['after-commit', 2],
    ['random-time', 4],
  ],
  faultPool: TRANSIENT_FAULTS,
  dropChance: 0.3,
  declineChance: 0.15,
  readLagMs: [0, 2_000],
  retrysafe: { start },
};
