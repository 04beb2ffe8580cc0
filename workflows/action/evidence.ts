/**
 * What provider events (webhooks, settlement events) are worth to one action. An event is evidence, never an
 * outcome: it is kept once per event ID, weighed once (against a lookup, or handed to a person), and whatever
 * contradicts it makes it a conflict for a person to see. The rules that weigh it live here; the action's state
 * records each verdict as a check.
 *
 *   received ─▶ unweighed ─┬─ a lookup agrees (same providerRef) ─────────▶ trustworthy check
 *                          ├─ a lookup names another ref / finds nothing ─▶ refuted: a conflict
 *                          └─ the tool has no lookup ─────────────────────▶ untrusted check: a person decides
 */
import { log } from '@temporalio/workflow';
import type { ActionStatus } from '../../policies/action-status';
import type { EventConflict, ProviderEvent, ReconciliationCheck } from '../../messages/action';

/** Distinct provider events one action keeps; a flood beyond it is dropped (and logged), not kept forever. */
const MAX_EVENTS = 1_000;

/** What weighing found an event to be worth. */
export interface Verdict {
  trustworthy: boolean;
  detail: string;
  /** Set when something contradicted the event: it becomes a conflict with this reason. */
  refutedBy?: string;
}

export class Evidence {
  private readonly events: ProviderEvent[] = [];
  /** Event IDs already cross-checked (by a lookup) or handed to a person; each is weighed once. */
  private readonly weighed = new Set<string>();
  /** Events a lookup contradicted, with why: they are conflicts, never proof. */
  private readonly refuted = new Map<string, string>();

  /** @param record keeps one verdict as the action's check (the action's state owns its checks). */
  constructor(
    private readonly key: string,
    private readonly record: (check: ReconciliationCheck) => void,
    private readonly now: () => string,
  ) {}

  /** Keeps an event from outside, once per event ID; anything malformed or for another key is dropped. */
  receive(event: ProviderEvent): void {
    if (event.key && event.key !== this.key) return;
    if (typeof event.eventId !== 'string' || !event.eventId) return;
    if (event.outcome !== 'succeeded' && event.outcome !== 'failed') return;
    if (this.events.some((e) => e.eventId === event.eventId)) return;
    if (this.events.length >= MAX_EVENTS) {
      log.warn('provider event dropped: too many distinct events', { key: this.key, eventId: event.eventId });
      return;
    }
    this.events.push({ ...event, receivedAt: event.receivedAt ?? this.now() });
  }

  get all(): readonly ProviderEvent[] {
    return this.events;
  }

  /** The first event not yet weighed: one that claims success, or (anyOutcome) any event at all. */
  unweighed(anyOutcome: boolean): ProviderEvent | undefined {
    return this.events.find(
      (e) => !this.weighed.has(e.eventId) && (anyOutcome || (e.outcome === 'succeeded' && !!e.providerRef)),
    );
  }

  /** Every event not yet weighed that claims success. */
  unweighedSuccesses(): ProviderEvent[] {
    return this.events.filter((e) => !this.weighed.has(e.eventId) && e.outcome === 'succeeded' && e.providerRef);
  }

  /** Records what an event was found to be worth, once: a check, and a conflict when something contradicted it. */
  weigh(event: ProviderEvent, verdict: Verdict): void {
    if (this.weighed.has(event.eventId)) return;
    this.weighed.add(event.eventId);
    if (verdict.refutedBy) this.refuted.set(event.eventId, verdict.refutedBy);
    this.record({
      at: this.now(),
      kind: 'evidence',
      found: event.outcome === 'succeeded',
      trustworthy: verdict.trustworthy,
      detail: `${describeEvent(event)}: ${verdict.detail}`,
    });
  }

  /** A lookup found the effect: events naming it agree, an event naming another reference is refuted. */
  weighAgainstLookup(providerRef: string | undefined): ProviderEvent[] {
    const agreeing: ProviderEvent[] = [];
    for (const event of this.unweighedSuccesses()) {
      if (!providerRef || event.providerRef === providerRef) {
        this.weigh(event, { trustworthy: true, detail: `a lookup agrees${providerRef ? ` (${providerRef})` : ''}` });
        agreeing.push(event);
      } else {
        const why = `names ${event.providerRef}, but the lookup found ${providerRef}`;
        this.weigh(event, { trustworthy: false, detail: why, refutedBy: why });
      }
    }
    return agreeing;
  }

  /** A lookup trusted after the lag found nothing: every success event is refuted. Returns them. */
  weighAgainstAbsence(): ProviderEvent[] {
    const refuted = this.unweighedSuccesses();
    const why = 'says it succeeded, but a lookup after the read-after-write lag found nothing';
    for (const event of refuted) this.weigh(event, { trustworthy: false, detail: why, refutedBy: why });
    return refuted;
  }

  /**
   * Events that disagree with the action's outcome or with each other, derived from what the action holds now, so
   * a late contradicting event shows up without changing anything else.
   */
  conflicts(status: ActionStatus, providerRef: string | undefined): EventConflict[] {
    const happened = status === 'confirmed' || status === 'compensating' || status === 'compensated';
    const outcomes = new Set(this.events.map((e) => e.outcome));
    const reasonFor = (e: ProviderEvent): string | undefined => {
      const refuted = this.refuted.get(e.eventId);
      if (refuted) return refuted;
      if (happened && e.outcome === 'failed') {
        return `says it failed, but the action is ${status}${providerRef ? ` (${providerRef})` : ''}`;
      }
      if (happened && e.providerRef && providerRef && e.providerRef !== providerRef) {
        return `names ${e.providerRef}, but the action holds ${providerRef}`;
      }
      if (status === 'failed' && e.outcome === 'succeeded') return 'says it succeeded, but the action failed';
      if (!happened && status !== 'failed' && outcomes.size > 1) {
        return 'events for this action disagree (succeeded and failed)';
      }
      return undefined;
    };
    return this.events.flatMap((e) => {
      const reason = reasonFor(e);
      if (!reason) return [];
      const { receivedAt, eventId, type, outcome } = e;
      return [
        {
          at: receivedAt ?? '',
          eventId,
          type,
          outcome,
          ...(e.providerRef ? { providerRef: e.providerRef } : {}),
          reason,
        },
      ];
    });
  }
}

export function describeEvent(e: ProviderEvent): string {
  return `${e.type} ${e.eventId}${e.providerRef ? ` (${e.providerRef})` : ''}${e.provider ? ` from ${e.provider}` : ''}`;
}
