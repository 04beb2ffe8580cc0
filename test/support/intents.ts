import { exampleRegistry, type ChargeIntent } from '../../examples/tools';
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
