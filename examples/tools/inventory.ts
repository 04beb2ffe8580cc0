import { ReleaseInput, ReserveInput } from './schemas';
import { query, sandboxLookup, sandboxPost } from './sandbox-rest';
import { defineTool } from 'retrysafe';

/** Inventory: reservations and releases keyed by Idempotency-Key; a reservation is undone by its release. */
export function inventoryTools(baseUrl: string) {
  const reserve = defineTool({
    name: 'reserve',
    version: 1,
    description: 'Reserve stock of one SKU for an order.',
    input: ReserveInput,
    kind: 'mutation',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 1_000,
    riskClass: 'routine-message',
    limits: { quantity: { max: 100 } },
    summarize: (i) => `reserve ${i.quantity} × ${i.sku} for ${i.orderId}`,
    dryRun: (i) => ({ target: `SKU ${i.sku} for order ${i.orderId}`, scope: `${i.quantity} unit(s) held` }),
    compensation: { tool: 'release', input: (_i, done) => ({ reservationId: done.providerRef }) },
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/reservations', sendsKey: true }, i, ctx),
    lookup: (_i, ctx) => sandboxLookup(baseUrl, `/v1/reservations${query({ idempotencyKey: ctx.key })}`, ctx),
  });
  const release = defineTool({
    name: 'release',
    version: 1,
    description: 'Release an earlier stock reservation, by its reservation id.',
    input: ReleaseInput,
    kind: 'mutation',
    dedupe: 'idempotency-key',
    readAfterWriteLagMs: 1_000,
    riskClass: 'routine-message',
    summarize: (i) => `release reservation ${i.reservationId}`,
    dryRun: (i) => ({ target: `reservation ${i.reservationId}`, scope: 'one reservation released' }),
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/releases', sendsKey: true }, i, ctx),
    lookup: (_i, ctx) => sandboxLookup(baseUrl, `/v1/releases${query({ idempotencyKey: ctx.key })}`, ctx),
  });
  return [reserve, release] as const;
}
