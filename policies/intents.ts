import { z } from 'zod';
import { RetrysafeError } from './errors';

/**
 * Typed intents: what a planner may propose and what an executor acts on. Parsing normalizes (trims
 * text, lower-cases emails and currencies, NFC) so that the request hash is computed over one canonical
 * form. Amounts are integer minor units; floats never carry money.
 */
const text = (max: number) =>
  z
    .string()
    .transform((s) => s.normalize('NFC').trim())
    .pipe(z.string().min(1).max(max));
const identifier = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'must be an identifier of letters, digits, ".", "_" or "-"');
const cents = z.number().int('must be an integer number of minor units').positive().max(100_000_000);
const currency = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{3}$/, 'must be a three-letter ISO currency code');

export const ChargeIntent = z.strictObject({
  operation: z.literal('charge'),
  amountCents: cents,
  currency,
  customerId: identifier,
  paymentMethod: identifier,
  merchantReference: identifier,
  description: text(200).optional(),
});
export type ChargeIntent = z.infer<typeof ChargeIntent>;

export const RefundIntent = z.strictObject({
  operation: z.literal('refund'),
  chargeId: identifier,
  amountCents: cents,
  merchantReference: identifier,
  reason: text(200).optional(),
});
export type RefundIntent = z.infer<typeof RefundIntent>;

export const SendEmailIntent = z.strictObject({
  operation: z.literal('send-email'),
  to: z.string().trim().toLowerCase().pipe(z.email()),
  subject: text(200),
  body: text(20_000),
  /** A pre-approved template the text was rendered from (policies/tool-contracts.ts APPROVED_EMAIL_TEMPLATES). */
  template: identifier.optional(),
});
export type SendEmailIntent = z.infer<typeof SendEmailIntent>;

export const CreateTicketIntent = z.strictObject({
  operation: z.literal('create-ticket'),
  externalRef: identifier,
  title: text(200),
  body: text(20_000),
  priority: z.enum(['low', 'normal', 'high']).default('normal'),
});
export type CreateTicketIntent = z.infer<typeof CreateTicketIntent>;

export const ReserveIntent = z.strictObject({
  operation: z.literal('reserve'),
  sku: identifier,
  quantity: z.number().int().positive().max(10_000),
  orderId: identifier,
});
export type ReserveIntent = z.infer<typeof ReserveIntent>;

export const ReleaseIntent = z.strictObject({
  operation: z.literal('release'),
  reservationId: identifier,
});
export type ReleaseIntent = z.infer<typeof ReleaseIntent>;

export const ShippingAddress = z.strictObject({
  line1: text(200),
  city: text(100),
  postalCode: text(20),
  country: z
    .string()
    .trim()
    .toUpperCase()
    .regex(/^[A-Z]{2}$/, 'must be a two-letter country code'),
});

export const CreateShipmentIntent = z.strictObject({
  operation: z.literal('create-shipment'),
  shipmentRef: identifier,
  orderId: identifier,
  address: ShippingAddress,
});
export type CreateShipmentIntent = z.infer<typeof CreateShipmentIntent>;

export const Intent = z.discriminatedUnion('operation', [
  ChargeIntent,
  RefundIntent,
  SendEmailIntent,
  CreateTicketIntent,
  ReserveIntent,
  ReleaseIntent,
  CreateShipmentIntent,
]);
export type Intent = z.infer<typeof Intent>;
export type Operation = Intent['operation'];
export type IntentOf<O extends Operation> = Extract<Intent, { operation: O }>;

export const OPERATIONS = [
  'charge',
  'refund',
  'send-email',
  'create-ticket',
  'reserve',
  'release',
  'create-shipment',
] as const satisfies readonly Operation[];

export function isOperation(value: unknown): value is Operation {
  return typeof value === 'string' && (OPERATIONS as readonly string[]).includes(value);
}

/** Larger intents are refused before they reach history or a provider: they are plans, not documents. */
export const MAX_INTENT_BYTES = 32 * 1024;

/**
 * Validates and normalizes raw input into an intent. Throws a typed error naming the first bad field:
 * `UnknownOperation`, `PayloadTooLarge` or `InvalidIntent`.
 */
export function parseIntent(raw: unknown): Intent {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RetrysafeError('InvalidIntent', 'intent must be an object', { field: '(root)' });
  }
  const operation = (raw as { operation?: unknown }).operation;
  if (!isOperation(operation)) {
    throw new RetrysafeError(
      'UnknownOperation',
      `operation ${JSON.stringify(operation)} is not one of ${OPERATIONS.join(', ')}`,
      { field: 'operation' },
    );
  }
  let size: number;
  try {
    size = utf8Length(JSON.stringify(raw));
  } catch {
    throw new RetrysafeError('InvalidIntent', 'intent is not serializable JSON', { field: '(root)' });
  }
  if (size > MAX_INTENT_BYTES) {
    throw new RetrysafeError('PayloadTooLarge', `intent is ${size} bytes; the limit is ${MAX_INTENT_BYTES}`, {
      field: '(root)',
      size,
    });
  }
  const parsed = Intent.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path;
    const field = path.length ? path.join('.') : '(root)';
    throw new RetrysafeError('InvalidIntent', `${operation}: ${field}: ${issue.message}`, {
      field,
      operation,
      issues: parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
