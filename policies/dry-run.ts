import type { PolicyDecision } from './decision-table';
import type { Intent } from './intents';
import { redactedPreview, summarizeIntent } from './tool-contracts';

/**
 * What a person sees before approving: the exact effect computed without performing it. The approval
 * that follows signs `key` and `requestHash`, so it covers this request and no other; the payload here
 * is the memo-safe preview (emails masked, secret fields dropped), while the hash covers every field.
 */
export interface DryRun {
  key: string;
  operation: Intent['operation'];
  /** What the action touches at the provider: a customer, a charge, a recipient, a SKU… */
  target: string;
  /** The intent as the effect would send it, redacted for display. */
  payload: Record<string, unknown>;
  /** How far the effect reaches, in one line. */
  scope: string;
  /** One line, as the Web UI and the ops CLI show the action. */
  summary: string;
  amountCents?: number;
  currency?: string;
  policy: PolicyDecision;
  requestHash: string;
  createdAt: string;
}

/** Builds the dry run of one action. Pure: the caller supplies the time (workflow time inside a workflow). */
export function buildDryRun(
  key: string,
  intent: Intent,
  requestHash: string,
  decision: PolicyDecision,
  nowIso: string,
): DryRun {
  const payload = redactedPreview(intent);
  const { target, scope } = describeReach(intent, payload);
  return {
    key,
    operation: intent.operation,
    target,
    payload,
    scope,
    summary: summarizeIntent(intent),
    ...('amountCents' in intent ? { amountCents: intent.amountCents } : {}),
    ...('currency' in intent ? { currency: intent.currency } : {}),
    policy: decision,
    requestHash,
    createdAt: nowIso,
  };
}

function describeReach(intent: Intent, preview: Record<string, unknown>): { target: string; scope: string } {
  switch (intent.operation) {
    case 'charge':
      return {
        target: `customer ${intent.customerId} (payment method ${intent.paymentMethod})`,
        scope: `one charge of ${intent.amountCents} ${intent.currency.toUpperCase()} minor units`,
      };
    case 'refund':
      return { target: `charge ${intent.chargeId}`, scope: `one refund of ${intent.amountCents} minor units` };
    case 'send-email':
      // The recipient is shown as the preview masks it; the approval's hash still binds the full address.
      return { target: `recipient ${String(preview.to)}`, scope: 'one email to one recipient; it cannot be unsent' };
    case 'create-ticket':
      return { target: `ticket ${intent.externalRef}`, scope: `one ${intent.priority}-priority ticket` };
    case 'reserve':
      return { target: `SKU ${intent.sku} for order ${intent.orderId}`, scope: `${intent.quantity} unit(s) held` };
    case 'release':
      return { target: `reservation ${intent.reservationId}`, scope: 'one reservation released' };
    case 'create-shipment':
      return {
        target: `order ${intent.orderId} to ${intent.address.city}, ${intent.address.country}`,
        scope: `one shipment (ref ${intent.shipmentRef})`,
      };
    default: {
      const unhandled: never = intent;
      return { target: String((unhandled as { operation?: unknown }).operation), scope: 'unknown' };
    }
  }
}
