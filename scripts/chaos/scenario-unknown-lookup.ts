import type { CreateTicketIntent } from '../../examples/tools';
import { actionState, recordsWhere, rootMessage, waitForActionStatus, type ActionState } from './observe';
import { RESTING_STATUSES, claimThroughCrashes, claimedActionKey } from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';

/**
 * A helpdesk ticket on a provider with no idempotency key and a lagging search by reference. Replies are
 * often dropped after the commit, so the executor must look the ticket up and wait out the read lag
 * before it may conclude "absent" and send. Expected: exactly one ticket per reference, confirmed, and
 * nothing left unknown.
 */

function start(ctx: IterationContext): StartedWork {
  const externalRef = `T-${ctx.eventId}`;
  const intent: CreateTicketIntent = {
    operation: 'create-ticket',
    externalRef,
    title: `Renewal follow-up for ${ctx.eventId}`,
    body: 'Opened by the chaos harness; one ticket per reference is the expected outcome.',
    priority: 'normal',
  };
  const key = claimedActionKey(ctx, 'create-ticket');
  let claimError: Error | undefined;
  let reached: ActionState | undefined;
  const settled = (async () => {
    try {
      await claimThroughCrashes(ctx, intent);
    } catch (err) {
      claimError = err as Error;
      return;
    }
    reached = await waitForActionStatus(ctx.client, key, RESTING_STATUSES, ctx.signal);
  })();

  return {
    settled,
    async verify(): Promise<Tally> {
      const tickets = recordsWhere(await ctx.providers.tickets.ledger(), 'tickets', { externalRef });
      const state = reached ?? (await actionState(ctx.client, key, ctx.stack.ledger));
      const status = claimError ? 'claim-failed' : (state?.status ?? 'absent');
      const unexplained: string[] = [];
      if (claimError) unexplained.push(`claim failed: ${rootMessage(claimError)}`);
      else if (status !== 'confirmed')
        unexplained.push(`${key} ended ${status}${reached ? '' : ' (still running at the deadline)'}`);
      return {
        outcome: status,
        expectedEffects: 1,
        actualEffects: tickets.length,
        duplicates: Math.max(0, tickets.length - 1),
        lost: Math.max(0, 1 - tickets.length),
        unknown: status === 'unknown' ? 1 : 0,
        needsReview: status === 'needs_review' ? 1 : 0,
        unexplained,
        notes: [`action ${key}`, `tickets ${tickets.map((t) => t.id).join(', ') || 'none'}`],
      };
    },
  };
}

export const unknownLookupScenario: ChaosScenario = {
  name: 'unknown-lookup',
  summary: 'ticket on a key-less provider with a lagging lookup; replies dropped after commit',
  operation: 'create-ticket',
  providers: ['tickets'],
  modes: [
    ['before-send', 1],
    ['in-flight', 2],
    ['after-commit', 2],
    ['before-lookup', 2],
    ['gateway-error', 1],
    ['random-time', 1],
  ],
  faultPool: [
    ['none', 3],
    ['status-5xx', 1],
    ['status-429', 1],
    ['reset', 1],
    ['delay', 1],
  ],
  dropChance: 0.6,
  declineChance: 0,
  // Up to the contract's lag: a provider lagging longer than its contract says is the honest limit, not a bug.
  readLagMs: [500, 3_000],
  retrysafe: { start },
};
