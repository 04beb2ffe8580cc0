import type { ActionLedger } from '../ledger';
import type { ActionStatus } from '../policies/action-status';
import { canTransition, isFinal } from '../policies/action-status';
import type { ActionSnapshot, Settlement } from '../messages/action';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';
import { snapshotFromLedger } from './claim-action';
import { recordStatusCounted } from './record-ledger';

export interface SettleRecordInput extends Settlement {
  key: string;
  tenant: string;
  /** The holder the run's act settled the row as (ActOnRecordResult.holder). */
  holder: string;
}

/** The status a settlement moves a row-held action to; `kept` moves nothing. */
const SETTLED_AS: Record<Exclude<Settlement['state'], 'kept'>, ActionStatus> = {
  compensating: 'compensating',
  compensated: 'compensated',
  'compensation-failed': 'needs_review',
};

/**
 * What a run decided of an action it acted on through the ledger's row (no action workflow): its undo claimed, done,
 * or failed, written to the row as the holder its act settled it as, with the next sequence number. A write the
 * row refuses (another holds it) raises an alarm in the ledger; the row's record is returned either way.
 *
 * Only a move the status machine allows from the row as read is written. The holder is the run's, the same for every
 * attempt of this activity, so it cannot tell a stale attempt from a current one: a first attempt that stalled (its
 * worker paused past the activity's timeout) and woke after its retry had written `compensating` and the run then
 * `compensated` would otherwise move the settled row back to `compensating` (`npm run chaos -- --faults all`, seed
 * 20261214, #3). A row already past the move (or at it) is left as it is.
 */
export function createSettleRecord(deps: { ledger: ActionLedger; metrics?: RetrysafeMetrics }) {
  const metrics = deps.metrics ?? noRetrysafeMetrics;
  async function settleRecord(input: SettleRecordInput): Promise<ActionSnapshot | undefined> {
    const { ledger } = deps;
    if (input.state === 'kept') return undefined;
    const row = await ledger.get(input.key);
    if (!row) return undefined;
    const to = SETTLED_AS[input.state];
    const reason =
      input.state === 'compensating'
        ? `compensation ${input.compensationKey ?? ''} claimed`
        : input.state === 'compensated'
          ? `compensation ${input.compensationKey ?? ''} confirmed`
          : `compensation ${input.compensationKey ?? ''} failed; see that action`;
    if (row.status !== to && canTransition(row.status, to)) {
      await recordStatusCounted(ledger, metrics, input.tenant, {
        key: input.key,
        seq: row.seq + 1,
        status: to,
        at: new Date().toISOString(),
        reason,
        by: input.by,
        holder: input.holder,
        outcome: `${to}: ${row.providerRef ?? input.key}`,
        ...(isFinal(to) ? { settled: true } : {}),
      });
    }
    const now = await ledger.get(input.key);
    return now ? snapshotFromLedger(ledger, now) : undefined;
  }
  return { settleRecord };
}
