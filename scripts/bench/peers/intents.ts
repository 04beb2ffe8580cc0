import {
  exampleRegistry,
  type ChargeIntent,
  type CreateShipmentIntent,
  type CreateTicketIntent,
  type ExampleOperation,
  type ReserveIntent,
  type SendEmailIntent,
} from '../../../examples/tools';
import { shipmentRefFor } from '../../../examples/tools/references';
import { renewalChargeIntent } from '../../../examples/workflows/renewal';
import type { PeerChargeInput, PeerCrashInput, PeerRenewalInput } from './types';
import { actionKeyForStep, runWorkflowId } from 'retrysafe';

/**
 * What every system in the peer bench sends, retrysafe included: the example tools' intents, built as the
 * renewal workflow (examples/workflows/renewal.ts) and the chaos scenarios for email and tickets build them, and
 * the key of each, by retrysafe's own derivation from tenant and event. So all three send the providers the same
 * requests under the same keys.
 */

const versions = exampleRegistry();

/** `<operation>:v<N>:<tenant>:<eventId>`: the step's key inside the event's run, as retrysafe derives it. */
export function actionKeyFor(input: { tenant: string; eventId: string }, operation: ExampleOperation): string {
  return actionKeyForStep(runWorkflowId(input.tenant, input.eventId), {
    operation,
    version: versions.get(operation).version,
  });
}

/** As the renewal proposes its charge: the order is the merchant reference. */
export const chargeIntent = (input: PeerChargeInput): ChargeIntent => renewalChargeIntent(input);

export function reserveIntent(input: PeerRenewalInput): ReserveIntent {
  return { operation: 'reserve', sku: input.sku, quantity: input.quantity, orderId: input.orderId };
}

export function shipmentIntent(input: PeerRenewalInput): CreateShipmentIntent {
  return {
    operation: 'create-shipment',
    shipmentRef: shipmentRefFor(input.tenant, input.orderId),
    orderId: input.orderId,
    address: input.shipTo,
  };
}

/** The ticket's external reference, for counting the tickets of one iteration at the provider. */
export const ticketRefFor = (eventId: string) => `T-${eventId}`;

/**
 * The crash scenario's one effect, as retrysafe's chaos sends it (scenario-email-no-key.ts,
 * scenario-unknown-lookup.ts): an email through the key-less provider, or a ticket through the lagging lookup one.
 */
export function crashIntent(input: PeerCrashInput): SendEmailIntent | CreateTicketIntent {
  if (input.target === 'send-email') {
    return {
      operation: 'send-email',
      to: 'renewals@example.com',
      subject: `Your renewal ${input.eventId}`,
      body: 'Thank you for renewing. (Sent by the peer bench: exactly one of these is expected.)',
    };
  }
  return {
    operation: 'create-ticket',
    externalRef: ticketRefFor(input.eventId),
    title: `Renewal follow-up for ${input.eventId}`,
    body: 'Opened by the peer bench; one ticket per reference is the expected outcome.',
    priority: 'normal',
  };
}
