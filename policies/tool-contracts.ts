import type { Intent, IntentOf, Operation } from './intents';
import { RetrysafeError } from './errors';

/**
 * One contract per operation, declared once. The executor and the effect lifecycle read it to decide
 * what a retry may do after an attempt that may have reached the provider:
 *   idempotency-key  resend with the same key; the provider returns the original result
 *   lookup           ask the provider by reference first; resend only once it reliably says "absent"
 *   none             never resend; the outcome is unknown until evidence or a human resolves it
 */
export type ProviderKind = 'payments' | 'email' | 'tickets' | 'inventory' | 'shipping';
export type DedupeCapability = 'idempotency-key' | 'lookup' | 'none';
/** Rows of the decision table (policies/decision-table.ts). */
export type RiskClass = 'read' | 'routine-message' | 'customer-message' | 'money-movement' | 'destructive' | 'production-change';

export interface ToolContract<O extends Operation = Operation> {
  operation: O;
  /** The key's semantic version; bump it when the meaning of the intent changes. */
  version: number;
  kind: 'read' | 'mutation';
  provider: ProviderKind;
  dedupe: DedupeCapability;
  /** How long the provider's read API may lag behind a committed write; an empty lookup inside it proves nothing. */
  readAfterWriteLagMs: number;
  riskClass: RiskClass;
  /** The operation that undoes this one's business effect, if any. */
  compensation?: Operation;
  limits: { maxAmountCents?: number; maxQuantity?: number };
  /** Top-level intent fields that never enter the request hash or the memo preview. */
  secretFields: readonly string[];
  /** One line for the Web UI and the ops CLI. */
  summarize(intent: IntentOf<O>): string;
  /** The reference the provider can be asked about, when the contract allows a lookup. */
  lookupReference?(intent: IntentOf<O>, key: string): string;
}

const money = (cents: number, currency = 'usd') => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

type ContractTable = { [O in Operation]: ToolContract<O> };

export const TOOL_CONTRACTS: ContractTable = {
  charge: {
    operation: 'charge',
    version: 1,
    kind: 'mutation',
    provider: 'payments',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 2_000,
    riskClass: 'money-movement',
    compensation: 'refund',
    limits: { maxAmountCents: 1_000_000 },
    secretFields: [],
    summarize: (i) => `charge ${money(i.amountCents, i.currency)} to ${i.customerId} for ${i.merchantReference}`,
    lookupReference: (_i, key) => key,
  },
  refund: {
    operation: 'refund',
    version: 1,
    kind: 'mutation',
    provider: 'payments',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 2_000,
    riskClass: 'money-movement',
    limits: { maxAmountCents: 1_000_000 },
    secretFields: [],
    summarize: (i) => `refund ${(i.amountCents / 100).toFixed(2)} (charge currency) of ${i.chargeId}`,
    lookupReference: (_i, key) => key,
  },
  'send-email': {
    operation: 'send-email',
    version: 1,
    kind: 'mutation',
    provider: 'email',
    dedupe: 'none',
    readAfterWriteLagMs: 0,
    riskClass: 'customer-message',
    limits: {},
    secretFields: [],
    summarize: (i) => `email "${i.subject}" to ${i.to.replace(/^(.).*@/, '$1***@')}`,
  },
  'create-ticket': {
    operation: 'create-ticket',
    version: 1,
    kind: 'mutation',
    provider: 'tickets',
    dedupe: 'lookup',
    readAfterWriteLagMs: 3_000,
    riskClass: 'routine-message',
    limits: {},
    secretFields: [],
    summarize: (i) => `ticket "${i.title}" (${i.priority}) ref ${i.externalRef}`,
    lookupReference: (i) => i.externalRef,
  },
  reserve: {
    operation: 'reserve',
    version: 1,
    kind: 'mutation',
    provider: 'inventory',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 1_000,
    riskClass: 'routine-message',
    compensation: 'release',
    limits: { maxQuantity: 100 },
    secretFields: [],
    summarize: (i) => `reserve ${i.quantity} × ${i.sku} for ${i.orderId}`,
    lookupReference: (_i, key) => key,
  },
  release: {
    operation: 'release',
    version: 1,
    kind: 'mutation',
    provider: 'inventory',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 1_000,
    riskClass: 'routine-message',
    limits: {},
    secretFields: [],
    summarize: (i) => `release reservation ${i.reservationId}`,
    lookupReference: (_i, key) => key,
  },
  'create-shipment': {
    operation: 'create-shipment',
    version: 1,
    kind: 'mutation',
    provider: 'shipping',
    dedupe: 'lookup',
    readAfterWriteLagMs: 2_000,
    riskClass: 'routine-message',
    limits: {},
    secretFields: [],
    summarize: (i) => `ship ${i.orderId} to ${i.address.city}, ${i.address.country} (ref ${i.shipmentRef})`,
    lookupReference: (i) => i.shipmentRef,
  },
};

export function contractFor<O extends Operation>(operation: O): ToolContract<O> {
  const contract = Object.prototype.hasOwnProperty.call(TOOL_CONTRACTS, operation)
    ? (TOOL_CONTRACTS as Record<string, ToolContract>)[operation]
    : undefined;
  if (!contract) throw new RetrysafeError('UnknownOperation', `no tool contract for operation ${JSON.stringify(operation)}`, { field: 'operation' });
  return contract as unknown as ToolContract<O>;
}

/**
 * Message templates approved in advance (their wording reviewed once, like a form letter): a customer
 * email from one of these is routine contact, not free text a person must read first.
 */
export const APPROVED_EMAIL_TEMPLATES = ['dispatch-notice', 'renewal-receipt'] as const;

/** The decision-table row an intent falls under: its contract's class, refined by the intent itself. */
export function riskClassOf(intent: Intent): RiskClass {
  if (intent.operation === 'send-email' && intent.template && (APPROVED_EMAIL_TEMPLATES as readonly string[]).includes(intent.template)) {
    return 'routine-message';
  }
  return contractFor(intent.operation).riskClass;
}

export function summarizeIntent(intent: Intent): string {
  return (contractFor(intent.operation).summarize as (i: Intent) => string)(intent);
}

/**
 * Checks the contract's per-action limits. A breach is `CeilingReached`: the action waits for a human,
 * it is not silently clipped or retried.
 */
export function checkContractLimits(intent: Intent): void {
  const { limits } = contractFor(intent.operation);
  if ('amountCents' in intent && limits.maxAmountCents !== undefined && intent.amountCents > limits.maxAmountCents) {
    throw new RetrysafeError(
      'CeilingReached',
      `${intent.operation}: amountCents ${intent.amountCents} is above the per-action limit ${limits.maxAmountCents}`,
      { field: 'amountCents', limit: limits.maxAmountCents, value: intent.amountCents },
    );
  }
  if ('quantity' in intent && limits.maxQuantity !== undefined && intent.quantity > limits.maxQuantity) {
    throw new RetrysafeError(
      'CeilingReached',
      `${intent.operation}: quantity ${intent.quantity} is above the per-action limit ${limits.maxQuantity}`,
      { field: 'quantity', limit: limits.maxQuantity, value: intent.quantity },
    );
  }
}

/** A memo-safe view of an intent: secrets dropped, email addresses masked. */
export function redactedPreview(intent: Intent): Record<string, unknown> {
  const { secretFields } = contractFor(intent.operation);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(intent)) {
    if (secretFields.includes(k)) continue;
    out[k] = typeof v === 'string' && /@/.test(v) ? v.replace(/^(.).*@/s, '$1***@') : v;
  }
  return out;
}
