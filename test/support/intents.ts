import { randomBytes } from 'node:crypto';
import { exampleRegistry, type ChargeIntent, type CreateTicketIntent } from '../../examples/tools';
import type { ActionInput } from '../../messages/action';

/** A charge of tenant acme's customer for the order `ord-<reference>`: the intent most integration tests claim. */
export function acmeCharge(reference: string, amountCents: number): ChargeIntent {
  return {
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: `ord-${reference}`,
  };
}

/**
 * The input of the charge action of run `run:acme:<eventId>`, with its key and request hash from the example
 * registry: for tests that start an action workflow by hand (time-skipping, with fake activities).
 */
export function acmeChargeAction(eventId: string, amountCents: number): ActionInput {
  const intent = exampleRegistry().parseIntent(acmeCharge(eventId, amountCents)) as ChargeIntent;
  return {
    key: `charge:v1:acme:${eventId}`,
    intent,
    requestHash: exampleRegistry().hash(intent),
    tenant: 'acme',
    owner: `run:acme:${eventId}`,
  };
}

/**
 * A unique marker to find in stored payloads, in letters only: random hex can hold a run of 13 or more digits
 * that passes as a card number, and intents refuse those (it failed a fresh-clone run once).
 */
export function letterMarker(): string {
  return `marker-${Array.from(randomBytes(16), (b) => 'abcdefghijklmnop'[b & 15]).join('')}`;
}

/** A ticket for the event: no approval and no compensation, so its action settles on its own. */
export function ticketIntent(eventId: string): CreateTicketIntent {
  return {
    operation: 'create-ticket',
    externalRef: `TK-${eventId}`,
    title: 'Renewal failed twice',
    body: 'Customer card expired; follow up.',
    priority: 'normal',
  };
}
