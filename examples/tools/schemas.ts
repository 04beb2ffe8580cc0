import { z } from 'zod';

/**
 * Input schemas of the example tools. Parsing normalizes (trims text, lower-cases emails and currencies,
 * NFC) so that the request hash is computed over one canonical form. Amounts are integer minor units;
 * floats never carry money. The tool's name is the intent's `operation`, so no schema declares it.
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

export const ChargeInput = z.strictObject({
  amountCents: cents,
  currency,
  customerId: identifier,
  paymentMethod: identifier,
  merchantReference: identifier,
  description: text(200).optional(),
});

export const RefundInput = z.strictObject({
  chargeId: identifier,
  amountCents: cents,
  merchantReference: identifier,
  reason: text(200).optional(),
});

export const SendEmailInput = z.strictObject({
  to: z.string().trim().toLowerCase().pipe(z.email()),
  subject: text(200),
  body: text(20_000),
  /** A pre-approved template the text was rendered from (APPROVED_EMAIL_TEMPLATES in send-email.ts). */
  template: identifier.optional(),
});

export const CreateTicketInput = z.strictObject({
  externalRef: identifier,
  title: text(200),
  body: text(20_000),
  priority: z.enum(['low', 'normal', 'high']).default('normal'),
});

export const ReserveInput = z.strictObject({
  sku: identifier,
  quantity: z.number().int().positive().max(10_000),
  orderId: identifier,
});

export const ReleaseInput = z.strictObject({
  reservationId: identifier,
});

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

export const CreateShipmentInput = z.strictObject({
  shipmentRef: identifier,
  orderId: identifier,
  address: ShippingAddress,
});
