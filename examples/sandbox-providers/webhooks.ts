import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { WebhookDelivery, WebhookEvent } from './types';

/** One first attempt plus this many retries, like real providers that retry a failing endpoint. */
const MAX_RETRIES = 3;
/** Doubles per retry: 100, 200, 400 ms; short because tests wait on it. */
const RETRY_BASE_MS = 100;
/** A receiver slower than this counts as failed for that attempt. */
const ATTEMPT_TIMEOUT_MS = 2_000;

interface WebhookTarget {
  url: string | null;
  delayMs: number;
  /** Signs each attempt when set; read per attempt, so a rotated secret applies to retries too. */
  secret: string | null;
}

/**
 * The Standard Webhooks headers of one attempt (webhook-id, webhook-timestamp, webhook-signature), signed with the
 * `standardwebhooks` package as any provider on that standard signs. The message ID is the event's, so every retry
 * of one event carries the same webhook-id and a receiver can refuse a replay by it.
 */
export function standardWebhookHeaders(
  secret: string,
  eventId: string,
  body: string,
  timestampSeconds: number,
): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': new Webhook(secret).sign(eventId, new Date(timestampSeconds * 1000), body),
  };
}

/**
 * Fire-and-forget delivery of commit events. Never awaited by request handling, so a slow or broken
 * receiver cannot change what the caller of the provider sees.
 */
export class WebhookDispatcher {
  private nextEventNumber = 1;
  // Event IDs are unique across processes (several processes of one kind post to one router, which
  // refuses an ID it has already accepted from that provider).
  private readonly idPrefix = `evt_${randomBytes(4).toString('hex')}_`;
  private deliveries: WebhookDelivery[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  // Bumped on reset so deliveries scheduled before it do not leak into the next test.
  private generation = 0;

  constructor(
    private readonly target: () => WebhookTarget,
    private readonly log: Logger,
  ) {}

  emit(event: Omit<WebhookEvent, 'id'>): void {
    const { url, delayMs } = this.target();
    if (url === null) return;
    const full: WebhookEvent = { id: `${this.idPrefix}${this.nextEventNumber++}`, ...event };
    const delivery: WebhookDelivery = { eventId: full.id, type: full.type, url, attempts: 0, delivered: false };
    this.deliveries.push(delivery);
    this.schedule(delayMs, () => this.attempt(url, full, delivery, this.generation));
  }

  list(): WebhookDelivery[] {
    return this.deliveries.map((delivery) => ({ ...delivery }));
  }

  reset(): void {
    this.generation += 1;
    this.deliveries = [];
    this.stop();
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private schedule(ms: number, run: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private async attempt(
    url: string,
    event: WebhookEvent,
    delivery: WebhookDelivery,
    generation: number,
  ): Promise<void> {
    if (generation !== this.generation) return;
    delivery.attempts += 1;
    try {
      const body = JSON.stringify(event);
      const { secret } = this.target();
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        ...(secret !== null ? standardWebhookHeaders(secret, event.id, body, Math.floor(Date.now() / 1000)) : {}),
      };
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`receiver answered ${response.status}`);
      delivery.delivered = true;
      delete delivery.lastError;
    } catch (err) {
      delivery.lastError = err instanceof Error ? err.message : String(err);
      const retry = delivery.attempts; // 1-based count of retries about to happen
      if (retry > MAX_RETRIES || generation !== this.generation) {
        this.log.warn({ eventId: event.id, type: event.type, url, err: delivery.lastError }, 'webhook undelivered');
        return;
      }
      this.schedule(RETRY_BASE_MS * 2 ** (retry - 1), () => this.attempt(url, event, delivery, generation));
    }
  }
}
