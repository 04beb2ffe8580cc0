import { z } from 'zod';

/**
 * Public API of the sandbox providers: request bodies (strict, so a typo is a 400 naming the field)
 * and the records they answer with. Client code validates provider responses with these.
 */

const text = z.string().trim().min(1);
const committedAt = z.iso.datetime();

// ---- payments ----
export const ChargeRequest = z.strictObject({
  amountCents: z.int().positive(),
  currency: z.string().regex(/^[a-z]{3}$/, 'currency must be 3 lowercase letters, e.g. usd'),
  customerId: text,
  paymentMethod: text,
  merchantReference: text,
  description: z.string().optional(),
});
export type ChargeRequest = z.infer<typeof ChargeRequest>;

export const Charge = z.object({
  id: z.string().startsWith('ch_'),
  object: z.literal('charge'),
  amountCents: z.int(),
  amountRefundedCents: z.int(),
  currency: z.string(),
  customerId: z.string(),
  merchantReference: z.string(),
  description: z.string().optional(),
  idempotencyKey: z.string(),
  status: z.literal('succeeded'),
  committedAt,
});
export type Charge = z.infer<typeof Charge>;

export const RefundRequest = z.strictObject({
  chargeId: text,
  amountCents: z.int().positive(),
  merchantReference: text,
  reason: z.string().optional(),
});
export type RefundRequest = z.infer<typeof RefundRequest>;

export const Refund = z.object({
  id: z.string().startsWith('re_'),
  object: z.literal('refund'),
  chargeId: z.string(),
  amountCents: z.int(),
  merchantReference: z.string(),
  reason: z.string().optional(),
  idempotencyKey: z.string(),
  status: z.literal('succeeded'),
  committedAt,
});
export type Refund = z.infer<typeof Refund>;

// ---- email ----
export const MessageRequest = z.strictObject({
  to: z.email(),
  subject: text,
  body: z.string(),
  tenant: z.string().optional(),
  /** A caller's correlation tag, echoed in the record and the webhook; not deduplicated, not searchable. */
  reference: z.string().min(1).max(255).optional(),
});
export type MessageRequest = z.infer<typeof MessageRequest>;

export const Message = z.object({
  id: z.string().startsWith('msg_'),
  object: z.literal('message'),
  to: z.string(),
  subject: z.string(),
  body: z.string(),
  tenant: z.string().optional(),
  reference: z.string().optional(),
  status: z.literal('queued'),
  committedAt,
});
export type Message = z.infer<typeof Message>;

// ---- tickets ----
export const TicketPriority = z.enum(['low', 'normal', 'high']);
export const TicketRequest = z.strictObject({
  externalRef: text,
  title: text,
  body: z.string(),
  priority: TicketPriority.optional(),
});
export type TicketRequest = z.infer<typeof TicketRequest>;

export const Ticket = z.object({
  id: z.string().startsWith('tk_'),
  object: z.literal('ticket'),
  externalRef: z.string(),
  title: z.string(),
  body: z.string(),
  priority: TicketPriority,
  status: z.literal('open'),
  committedAt,
});
export type Ticket = z.infer<typeof Ticket>;

// ---- inventory ----
export const ReservationRequest = z.strictObject({ sku: text, quantity: z.int().positive(), orderId: text });
export type ReservationRequest = z.infer<typeof ReservationRequest>;

export const Reservation = z.object({
  id: z.string().startsWith('rsv_'),
  object: z.literal('reservation'),
  sku: z.string(),
  quantity: z.int(),
  orderId: z.string(),
  idempotencyKey: z.string(),
  /** Becomes 'released' on the stored record; a keyed replay still answers the original snapshot. */
  status: z.enum(['reserved', 'released']),
  committedAt,
});
export type Reservation = z.infer<typeof Reservation>;

export const ReleaseRequest = z.strictObject({ reservationId: text });
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;

export const Release = z.object({
  id: z.string().startsWith('rel_'),
  object: z.literal('release'),
  reservationId: z.string(),
  idempotencyKey: z.string(),
  status: z.literal('released'),
  committedAt,
});
export type Release = z.infer<typeof Release>;

// ---- shipping ----
export const Address = z.strictObject({ line1: text, city: text, postalCode: text, country: text });
export type Address = z.infer<typeof Address>;

export const ShipmentRequest = z.strictObject({ shipmentRef: text, orderId: text, address: Address });
export type ShipmentRequest = z.infer<typeof ShipmentRequest>;

export const Shipment = z.object({
  id: z.string().startsWith('shp_'),
  object: z.literal('shipment'),
  shipmentRef: z.string(),
  orderId: z.string(),
  address: Address,
  labelUrl: z.string(),
  status: z.literal('label_created'),
  committedAt,
});
export type Shipment = z.infer<typeof Shipment>;

/** `{ data: [...] }` as answered by every lagged list endpoint. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item) });
}
