/**
 * The reconciliation phase: an outcome that is unknown is found out, never guessed. Lookups are trusted only once
 * the provider's read-after-write lag has passed since the last dispatch; provider events count only when a lookup
 * agrees (the evidence rules are in evidence.ts).
 *
 *   unknown ─┬─ the tool has a lookup: wait out the lag ─▶ look up ─┬─ found ─▶ confirmed
 *            │                                                      ├─ absent, no event says otherwise ─▶ absent
 *            │                                                      └─ could not ask ─▶ wait, ask again
 *            └─ no lookup: an event (or none after a while) ─▶ unresolved: a person decides
 */
import { condition, sleep } from '@temporalio/workflow';
import { RECONCILE_INTERVAL, RECONCILE_MAX_CHECKS } from '../../policies/timeouts';
import type { ProviderEvent } from '../../messages/action';
import { causeMessage, type ActionContext } from './context';

/** Lookups tried for an event that arrives during review before it is left to the person. */
const LATE_EVENT_LOOKUPS = 3;

type Lookup = Awaited<ReturnType<ActionContext['activities']['lookupAction']>>;

export async function reconcile(ctx: ActionContext): Promise<'confirmed' | 'absent' | 'unresolved'> {
  const { state, tool } = ctx;
  const eventArrived = () => state.evidence.unweighed(true) !== undefined;
  for (let check = 0; check < RECONCILE_MAX_CHECKS; check++) {
    if (!tool.hasLookup) {
      // Nothing to ask, and so nothing can verify an event: it goes to a person with the evidence shown.
      const event = state.evidence.unweighed(true);
      if (event) {
        weighUnverifiable(ctx, event);
        return 'unresolved';
      }
      // No event yet: wait a little for one, then hand over to a person.
      if (check >= 2) return 'unresolved';
      await condition(eventArrived, RECONCILE_INTERVAL);
      continue;
    }
    const lagLeft = state.lastDispatchEndedMs + tool.readAfterWriteLagMs - Date.now();
    if (lagLeft > 0) {
      // An empty lookup now would prove nothing (and an event is no proof without a lookup that agrees): wait out
      // the read-after-write lag on a durable timer.
      await sleep(lagLeft);
      continue;
    }
    const found = await lookUpAndRecord(ctx);
    if (!found) {
      await sleep(RECONCILE_INTERVAL);
      continue;
    }
    if (found.found) {
      const agreeing = state.evidence.weighAgainstLookup(found.providerRef);
      const said = agreeing[0] ? `, as provider event ${agreeing[0].type} (${agreeing[0].eventId}) said` : '';
      await state.move('confirmed', `lookup found ${found.providerRef}${said}`, {
        providerRef: found.providerRef,
        record: found.record,
      });
      return 'confirmed';
    }
    if (state.evidence.weighAgainstAbsence().length > 0 && !resendIsSafe(ctx)) {
      // The provider says it happened, its lookup says not: resending without a key could duplicate it.
      state.note('a provider event says it succeeded, but the lookup after the lag finds nothing; a person decides');
      return 'unresolved';
    }
    return 'absent';
  }
  return 'unresolved';
}

/** An event that arrived during review confirms only when a lookup agrees; true when it confirmed. */
export async function weighLateEvent(ctx: ActionContext, event: ProviderEvent): Promise<boolean> {
  const { state, tool } = ctx;
  if (!tool.hasLookup) {
    weighUnverifiable(ctx, event);
    return false;
  }
  const lagLeft = state.lastDispatchEndedMs + tool.readAfterWriteLagMs - Date.now();
  if (lagLeft > 0) await sleep(lagLeft);
  for (let attempt = 0; attempt < LATE_EVENT_LOOKUPS; attempt++) {
    const found = await lookUpAndRecord(ctx);
    if (!found) {
      await sleep(RECONCILE_INTERVAL);
      continue;
    }
    if (!found.found) {
      state.evidence.weighAgainstAbsence();
      return false;
    }
    state.evidence.weighAgainstLookup(found.providerRef);
    await state.move(
      'confirmed',
      `late provider event ${event.type} (${event.eventId}), and a lookup found ${found.providerRef}`,
      { providerRef: found.providerRef, record: found.record },
    );
    return true;
  }
  state.evidence.weigh(event, { trustworthy: false, detail: 'the lookup could not be asked; a person decides' });
  return false;
}

/** A resend with the same key cannot duplicate: the provider or our own dedupe row answers with the first. */
function resendIsSafe(ctx: ActionContext): boolean {
  return ctx.tool.dedupe === 'idempotency-key' || ctx.tool.dedupe === 'transactional';
}

/** Without a lookup an event cannot be verified: it is recorded, and the decision is a person's. */
function weighUnverifiable(ctx: ActionContext, event: ProviderEvent): void {
  const { state, tool } = ctx;
  state.evidence.weigh(event, {
    trustworthy: false,
    detail: `${tool.name} has no lookup to verify it; a person decides`,
  });
  state.note(
    `provider event ${event.type} (${event.eventId}) says it ${event.outcome}; nothing can verify it, so a person decides`,
  );
}

/**
 * One reconciliation lookup, recorded as a check. Undefined when the provider could not be asked: that proves
 * nothing either way (recorded as an untrustworthy check), and the caller asks again later.
 */
async function lookUpAndRecord(ctx: ActionContext): Promise<Lookup | undefined> {
  const { input, state } = ctx;
  try {
    const found = await ctx.activities.lookupAction({
      key: input.key,
      intent: input.intent,
      requestHash: input.requestHash,
    });
    state.recordCheck({ kind: 'lookup', found: found.found, trustworthy: true, detail: found.detail });
    return found;
  } catch (err) {
    state.recordCheck({ kind: 'lookup', found: false, trustworthy: false, detail: causeMessage(err) });
    return undefined;
  }
}
