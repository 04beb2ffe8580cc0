import type { Ledger } from '../../examples/sandbox-providers/spawn';

/** Counts at the provider, the ground truth: records and requests carrying one idempotency key. */
export function countForKey(ledger: Ledger, key: string, collection = 'charges') {
  const records = (ledger.records[collection] ?? []).filter(
    (r) => (r as { idempotencyKey?: string }).idempotencyKey === key,
  );
  const requests = ledger.requests.filter((r) => r.idempotencyKey === key);
  return {
    records: records.length,
    requests: requests.length,
    committed: requests.filter((r) => r.outcome === 'committed').length,
    replayed: requests.filter((r) => r.outcome === 'replayed').length,
  };
}

/** Counts at the provider for records that carry a business reference field (tickets, shipments, emails). */
export function countWhere(ledger: Ledger, collection: string, predicate: (r: Record<string, unknown>) => boolean) {
  return (ledger.records[collection] ?? []).filter((r) => predicate(r as Record<string, unknown>)).length;
}
