import type { ChargeIntent } from '../../policies/intents';
import type { RenewalInput } from '../../workflows/renewal';

let counter = 0;
/** A unique business event per test, so tests sharing one server never share an action key. */
export function uniqueEvent(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export function renewalInput(eventId: string, overrides: Partial<RenewalInput> = {}): RenewalInput {
  return {
    tenant: 'acme',
    eventId,
    orderId: `A-${eventId}`.slice(0, 80),
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    amountCents: 4990,
    currency: 'usd',
    sku: 'plan-annual',
    quantity: 1,
    shipTo: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
    ...overrides,
  };
}

export function chargeIntentFor(input: RenewalInput): ChargeIntent {
  return {
    operation: 'charge',
    amountCents: input.amountCents,
    currency: input.currency,
    customerId: input.customerId,
    paymentMethod: input.paymentMethod,
    merchantReference: input.orderId,
  };
}
