import type { ActionLedger, ClaimRecord, LedgerRow, StatusRecord } from '../ledger';
import { systemLeaseClock, type LeaseClock } from './lease-clock';
import { isFinal } from '../policies/action-status';
import { parseActionKey } from '../policies/action-key';
import type { ActionStatus } from '../policies/action-status';
import type { ActionSnapshot } from '../messages/action';
import { snapshotFromLedger } from './claim-action';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';

/**
 * The action workflow's writes to the durable ledger (ledger/): its claim of the key's row before it acts, then
 * one audit entry per status change, each keyed by the action key and the entry's sequence number (its index in
 * the action's audit trail). Every write is idempotent, so a retried local activity, or a replay on another worker
 * after a crash between the provider's commit and this write, writes nothing twice.
 */
export interface RecordLedgerInput {
  key: string;
  tenant: string;
  requestHash: string;
  owner: string;
  claimedAt: string;
  /** The workflow run that holds the row (`action:<runId>`), which claimLedgerRow made it. */
  holder: string;
  /** The status change, as the ledger records it (its key is the action's). */
  status: Omit<StatusRecord, 'key'>;
}

export type ClaimLedgerRowInput = Omit<RecordLedgerInput, 'status'> & { holder: string };

/**
 * What the worker's ledger says of a key before its action workflow does anything:
 *   held        the row is this workflow's (new, or claimed already by this run): go on
 *   mismatch    another request was recorded under the key: refuse, send nothing
 *   settled     an earlier workflow of the key settled it: answer with that, send nothing
 *   unresolved  an earlier workflow left it open (its workflow is gone): this one took the row over and sends
 *               nothing until a person says whether it happened (`recovered`)
 */
export type LedgerClaim =
  | { kind: 'held' }
  | { kind: 'mismatch'; recordedHash: string }
  | { kind: 'settled'; snapshot: ActionSnapshot }
  | { kind: 'unresolved'; recovered: Recovered }
  | { kind: 'busy'; holder: string; leaseUntil: string }
  | { kind: 'handed-over'; from: HandedOver };

/**
 * What a run's act left in the row when the action workflow took it over (its lease ended, or it released the row
 * because it could not learn the outcome): `planned`, nothing was sent; `dispatching` or `unknown`, a request may
 * have reached the provider, and reconciliation decides.
 */
export interface HandedOver {
  holder: string;
  status: LedgerRow['status'];
  providerRef?: string;
  at: string;
  /** The row's last sequence number: the workflow's entries are numbered after it. */
  seq: number;
}

/**
 * An earlier holder left the row unresolved and is gone: the workflow that took it over sends nothing and waits in
 * needs_review for a person to say whether the effect happened.
 */
export interface Recovered {
  status: ActionStatus;
  providerRef?: string;
  at: string;
  /** The row's last sequence number: this workflow's entries are numbered after it. */
  seq: number;
}

/** The holder a run's act writes with: the run, the act's token and the activity's attempt (see act-on-record). */
export const RUN_HOLDER_PREFIX = 'run:';

/** How often a takeover is tried when another holder moves the row at the same moment. */
const TAKEOVER_TRIES = 5;

/** A ledger write, its latency counted by operation (failed writes too: a slow database shows either way). */
export function timedLedgerWrite(metrics: RetrysafeMetrics) {
  return async function timed<T>(op: 'claim' | 'status' | 'takeover', write: () => Promise<T>): Promise<T> {
    const startedMs = performance.now();
    try {
      return await write();
    } finally {
      metrics.ledgerWrite(op, (performance.now() - startedMs) / 1000);
    }
  };
}

/**
 * Writes one status change with its latency measured, and counts it once when it applied: a retried write, which
 * the ledger answers as a repeat, is not counted again however often the activity or workflow task ran.
 */
export async function recordStatusCounted(
  ledger: ActionLedger,
  metrics: RetrysafeMetrics,
  tenant: string,
  update: StatusRecord & { holder?: string },
) {
  // A refused write raised an alarm in the ledger (ops alarms); the caller decides what it means for it.
  const write = await timedLedgerWrite(metrics)('status', () => ledger.recordStatus(update));
  if (write.applied && !write.repeat) metrics.statusChange(parseActionKey(update.key).operation, tenant, update.status);
  return write;
}

/** One status entry of an action workflow, as its holder writes it (counted once, see recordStatusCounted). */
export function recordEntry(ledger: ActionLedger, metrics: RetrysafeMetrics, input: RecordLedgerInput) {
  return recordStatusCounted(ledger, metrics, input.tenant, { key: input.key, ...input.status, holder: input.holder });
}

export function createRecordLedger(deps: {
  ledger: ActionLedger;
  metrics?: RetrysafeMetrics;
  leaseClock?: LeaseClock;
}) {
  const metrics = deps.metrics ?? noRetrysafeMetrics;
  const leaseNow = deps.leaseClock ?? systemLeaseClock;
  const timed = timedLedgerWrite(metrics);

  async function recordLedger(input: RecordLedgerInput): Promise<void> {
    await recordEntry(deps.ledger, metrics, input);
  }

  async function claimLedgerRow(input: ClaimLedgerRowInput): Promise<LedgerClaim> {
    const { ledger } = deps;
    let claim = await timed('claim', () => ledger.claimRow({ ...claimRecordOf(input), holder: input.holder }));
    for (let tries = 0; claim.kind === 'other'; tries++) {
      const { row } = claim;
      if (row.requestHash !== input.requestHash) return { kind: 'mismatch', recordedHash: row.requestHash };
      if (isFinal(row.status)) return { kind: 'settled', snapshot: await snapshotFromLedger(ledger, row) };
      const byRun = row.holder?.startsWith(RUN_HOLDER_PREFIX) === true;
      // A run's act holds the row while its lease runs: it is sending now, and nothing may act beside it.
      if (byRun && row.leaseUntil && Date.parse(row.leaseUntil) > leaseNow()) {
        return { kind: 'busy', holder: row.holder!, leaseUntil: row.leaseUntil };
      }
      const taken = await timed('takeover', () => ledger.takeOver(input.key, row.epoch, input.holder));
      // The swap fences the epoch, not the status: the displaced holder may have written (and sent) since `row` was
      // read, so what it left is the row as taken.
      if (taken && byRun) return { kind: 'handed-over', from: handedOverFrom({ ...taken, holder: row.holder }) };
      if (taken) return { kind: 'unresolved', recovered: recoveredFrom(taken) };
      if (tries >= TAKEOVER_TRIES) throw new Error(`the ledger row of ${input.key} kept moving during its takeover`);
      const now = await ledger.get(input.key);
      if (!now) throw new Error(`the ledger row of ${input.key} disappeared during its takeover`);
      claim = { kind: now.holder === input.holder ? 'held' : 'other', row: now };
    }
    return { kind: 'held' };
  }

  return { recordLedger, claimLedgerRow };
}

/** The row a claim of the action creates, its operation and tool version read off the key. */
export function claimRecordOf(input: Omit<RecordLedgerInput, 'status' | 'holder'>): ClaimRecord {
  const { operation, version } = parseActionKey(input.key);
  return {
    key: input.key,
    tenant: input.tenant,
    operation,
    toolVersion: version,
    requestHash: input.requestHash,
    owner: input.owner,
    claimedAt: input.claimedAt,
  };
}

function handedOverFrom(row: LedgerRow): HandedOver {
  return {
    holder: row.holder!,
    status: row.status,
    ...(row.providerRef ? { providerRef: row.providerRef } : {}),
    at: row.updatedAt,
    seq: row.seq,
  };
}

function recoveredFrom(row: LedgerRow): Recovered {
  return {
    status: row.status,
    ...(row.providerRef ? { providerRef: row.providerRef } : {}),
    at: row.updatedAt,
    seq: row.seq,
  };
}
