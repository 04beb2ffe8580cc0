// Workflow code computes these too (the renewal's shipment reference): the sandbox-safe entry point.
import { requestHash } from 'retrysafe/workflow';

/** The shipment schema's identifier (examples/tools/schemas.ts). */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The shipment reference for one tenant's order. The carrier dedupes on it in one namespace for every
 * tenant, so it must include the tenant: two tenants' renewals of the same order ID are two shipments.
 * `<tenant>-<orderId>-ship` when that reads back unambiguously (a tenant without "-") and is a valid
 * identifier of at most 100 characters; otherwise `<24 hex of SHA-256 over [tenant, orderId]>-ship`,
 * which no readable form can equal (hex has no "-"), in three dot-joined groups when it holds a long digit run.
 * Pure and deterministic: workflow code calls it.
 */
export function shipmentRefFor(tenant: string, orderId: string): string {
  const readable = `${tenant}-${orderId}-ship`;
  if (!tenant.includes('-') && IDENTIFIER.test(readable)) return readable;
  const hex = requestHash([tenant, orderId]).slice(0, 24);
  // About one hash in 90 holds 13 or more decimal digits in a row, which can read as a card number, and an intent
  // carrying one is refused (policies/card-numbers.ts). Such a hash is written in groups of 8 joined by dots, which
  // end a digit run; every other hash keeps the form runs already recorded.
  if (!LONG_DIGIT_RUN.test(hex)) return `${hex}-ship`;
  return `${hex.slice(0, 8)}.${hex.slice(8, 16)}.${hex.slice(16)}-ship`;
}

/** The shortest run of digits that can be a card number (policies/card-numbers.ts: MIN_CARD_DIGITS). */
const LONG_DIGIT_RUN = /\d{13}/;
