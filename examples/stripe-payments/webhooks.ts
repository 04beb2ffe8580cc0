/**
 * Stripe's webhooks for the retrysafe webhook router. Stripe signs its own way (`Stripe-Signature: t=…,v1=…`, HMAC
 * over the timestamp and the raw body, with the endpoint's `whsec_…` secret), so the router is handed a verifier
 * for it instead of Standard Webhooks secrets:
 *
 *   createWebhookRouter({ client, secrets: {}, verifiers: { stripe: stripeEventVerifier(endpointSecret) } })
 *
 * The official `stripe` package's `webhooks.constructEvent` checks the signature against the raw body and the
 * timestamp against the tolerance; this file only maps a verified charge event onto the router's event shape: the
 * action key is the charge's `metadata.retrysafe_key`, which stripe-charge sets on every charge (tools.ts).
 */
import Stripe from 'stripe';
import { KEY_METADATA } from './tools';

/** Stripe's default: a signature more than 5 minutes from the router's clock is refused. */
export const STRIPE_TOLERANCE_SECONDS = 300;

type Verified = { ok: true; messageId: string; event: unknown } | { ok: false; status: 400 | 401; reason: string };

/** A verifier for POST /webhooks/stripe: Stripe-Signature through `stripe.webhooks.constructEvent`. */
export function stripeEventVerifier(endpointSecret: string, toleranceSeconds = STRIPE_TOLERANCE_SECONDS) {
  return (delivery: {
    headers: Readonly<Record<string, string | undefined>>;
    rawBody: Buffer;
    nowMs: number;
  }): Verified => {
    const header = delivery.headers['stripe-signature'];
    if (!header) return { ok: false, status: 400, reason: 'signature unsigned: no Stripe-Signature header' };
    let event: Stripe.Event;
    try {
      event = Stripe.webhooks.constructEvent(
        delivery.rawBody,
        header,
        endpointSecret,
        toleranceSeconds,
        undefined,
        Math.floor(delivery.nowMs / 1000),
      );
    } catch (err) {
      return { ok: false, status: 401, reason: `signature refused by Stripe's verifier: ${(err as Error).message}` };
    }
    return { ok: true, messageId: event.id, event: routerEvent(event) };
  };
}

/** A charge event as the router reads events: the key from the charge's metadata, the charge ID as reference. */
function routerEvent(event: Stripe.Event): unknown {
  const object = event.data.object as { id?: string; object?: string; metadata?: Record<string, string> };
  const key = object.metadata?.[KEY_METADATA];
  return {
    id: event.id,
    type: event.type,
    ...(key !== undefined ? { idempotencyKey: key } : {}),
    data: { id: object.id ?? '' },
  };
}
