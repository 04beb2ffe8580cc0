// Workflow code computes these too (the renewal's shipment reference): the sandbox-safe entry point.
import { requestHash } from 'retrysafe/workflow';

/** The shipment schema's identifier (examples/tools/schemas.ts). */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The shipment reference for one tenant's order. The carrier dedupes on it in one namespace for every
 * tenant, so it must include the tenant: two tenants' renewals of the same order ID are two shipments.
 * `<tenant>-<orderId>-ship` when that reads back unambiguously (a tenant without "-") and is a valid
 * identifier of at most 100 characters; otherwise `<24 hex of SHA-256 over [tenant, orderId]>-ship`,
 * which no readable form can equal (hex has no "-"). Pure and deterministic: workflow code calls it.
 */
export function shipmentRefFor(tenant: string, orderId: string): string {
  const readable = `${tenant}-${orderId}-ship`;
  if (!tenant.includes('-') && IDENTIFIER.test(readable)) return readable;
  return `${requestHash([tenant, orderId]).slice(0, 24)}-ship`;
}
