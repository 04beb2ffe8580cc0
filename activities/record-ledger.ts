import type { ActionLedger, StatusRecord } from '../ledger';
import { parseActionKey } from '../policies/action-key';

/**
 * The action workflow's writes to the durable ledger (ledger/): its row at the start, then one audit
 * entry per status change, each keyed by the action key and the entry's sequence number (its index in
 * the action's audit trail). Both writes are idempotent, so a retried local activity, or a replay on
 * another worker after a crash between the provider's commit and this write, writes nothing twice.
 */
export interface RecordLedgerInput {
  key: string;
  tenant: string;
  requestHash: string;
  owner: string;
  claimedAt: string;
  /** The status change, as the ledger records it (its key is the action's). */
  status: Omit<StatusRecord, 'key'>;
}

export function createRecordLedger(deps: { ledger?: ActionLedger }) {
  return async function recordLedger(input: RecordLedgerInput): Promise<void> {
    const { ledger } = deps;
    if (!ledger) return;
    const { operation, version } = parseActionKey(input.key);
    // Insert-if-absent: the first write makes the row; every later one finds it.
    await ledger.recordClaim({
      key: input.key,
      tenant: input.tenant,
      operation,
      toolVersion: version,
      requestHash: input.requestHash,
      owner: input.owner,
      claimedAt: input.claimedAt,
    });
    await ledger.recordStatus({ key: input.key, ...input.status });
  };
}
