import { DEMO_RENEWAL } from '../../scripts/demo/renewal-crash';
import { renewalChargeIntent, type RenewalInput } from '../../examples/workflows/renewal';

let counter = 0;
/** A unique business event per test, so tests sharing one server never share an action key. */
export function uniqueEvent(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** The demo's renewal under a test's own event and order, without a receipt email (so counts stay per provider). */
export function renewalInput(eventId: string, overrides: Partial<RenewalInput> = {}): RenewalInput {
  const { customerEmail: _receiptTo, ...demo } = DEMO_RENEWAL;
  return { ...demo, eventId, orderId: `A-${eventId}`.slice(0, 80), ...overrides };
}

/** The charge the renewal proposes for this input. */
export const chargeIntentFor = renewalChargeIntent;
