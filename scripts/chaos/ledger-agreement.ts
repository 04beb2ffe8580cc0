/**
 * Every iteration's workers keep the durable ledger; after the iteration this checks the
 * ledger against the providers, the way the effects themselves are counted: every row that claims an
 * effect (confirmed, compensating, compensated) names a provider reference that a provider of the
 * iteration holds, and every effect a provider holds under one of the iteration's action keys has a row
 * that claims it or says `unknown` / `needs_review` (honest uncertainty); a row left at `dispatching`,
 * or saying `failed`, for an effect that exists is out of step.
 */
import type { Ledger, ProviderKind, SandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { ActionLedger, LedgerRow } from 'retrysafe/worker';

const CLAIMS_AN_EFFECT: readonly string[] = ['confirmed', 'compensating', 'compensated'];
/** Statuses that say "not known yet, a person or a lookup decides": honest about an effect either way. */
const UNSURE: readonly string[] = ['unknown', 'needs_review'];

export interface LedgerAgreement {
  rows: number;
  /** One line per disagreement: a row claiming an effect no provider has, or an effect with no honest row. */
  outOfStep: string[];
}

export async function ledgerAgreement(
  ledger: ActionLedger,
  providers: Partial<Record<ProviderKind, SandboxProvider>>,
  tenant: string,
  eventId: string,
): Promise<LedgerAgreement> {
  const rows = (await ledger.history({ tenant, limit: 10_000 })).filter((r) => keyEvent(r.key) === eventId);
  const ledgers: Ledger[] = await Promise.all(
    Object.values(providers)
      .filter((p): p is SandboxProvider => typeof p === 'object')
      .map((p) => p.ledger()),
  );
  const records = ledgers.flatMap((l) => Object.values(l.records).flat()) as Array<Record<string, unknown>>;
  const ids = new Set(records.map((r) => r.id).filter((id): id is string => typeof id === 'string'));
  const outOfStep: string[] = [];
  for (const row of rows) {
    if (CLAIMS_AN_EFFECT.includes(row.status) && !(row.providerRef && ids.has(row.providerRef))) {
      outOfStep.push(`ledger says ${row.key} is ${row.status} (${row.providerRef ?? 'no ref'}), no provider holds it`);
    }
  }
  const byKey = new Map<string, LedgerRow>(rows.map((r) => [r.key, r]));
  for (const record of records) {
    const key = [record.idempotencyKey, record.reference].find(
      (k): k is string => typeof k === 'string' && keyEvent(k) === eventId,
    );
    if (!key) continue;
    const row = byKey.get(key);
    if (!row) outOfStep.push(`${key}: the provider holds ${String(record.id)}, the ledger has no row`);
    else if (!CLAIMS_AN_EFFECT.includes(row.status) && !UNSURE.includes(row.status)) {
      outOfStep.push(`${key}: the provider holds ${String(record.id)}, the ledger says ${row.status}`);
    }
  }
  return { rows: rows.length, outOfStep };
}

/** The event segment of an action key (`operation:vN:tenant:event[:step]`), or undefined for anything else. */
function keyEvent(key: string): string | undefined {
  const parts = key.split(':');
  return parts.length >= 4 && /^v\d+$/.test(parts[1]) ? parts[3] : undefined;
}
