/**
 * The record: before anything else, the ledger row of the key decides; it is the action's only record. The row
 * is claimed by this run (`action:<runId>`); a run's act that holds it is waited for; a settled row is the answer;
 * a row of another request is refused. From then on every status change is written to the row before it takes
 * effect, so `dispatching` is on record before anything is sent (the executor
 * writes that one, before its first request).
 *
 *   claim ─┬─ busy (a run's act holds a live lease) ─▶ wait ≤1 s, claim again
 *          ├─ mismatch ─▶ refused (every claim too)            ├─ settled ─▶ adopted, nothing sent
 *          ├─ unresolved (its workflow is gone) ─▶ recovered    ├─ handed-over ─▶ taken over from the run's act
 *          └─ held ─▶ a fresh action
 */
import { proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import type { HandedOver, LedgerClaim, Recovered } from '../../activities/record-ledger';
import { isFinal } from '../../policies/action-status';
import { RetrysafeError } from '../../policies/errors';
import { POLICY_START_TO_CLOSE } from '../../policies/timeouts';
import type { ActionInput, ActionSnapshot } from '../../messages/action';
import type { ActionContext } from './context';

type Activities = ReturnType<typeof createActivities>;
/** How often, at most and at least, the ledger is asked again while a run's act holds the row. */
const BUSY_POLL_MAX_MS = 1_000;
const BUSY_POLL_MIN_MS = 100;

/** How the action starts, once its record is taken. */
export type Start =
  | { kind: 'done' }
  | { kind: 'fresh' }
  | { kind: 'recovered'; recovered: Recovered }
  | { kind: 'taken-over'; from: HandedOver };

export async function takeTheRecord(ctx: ActionContext): Promise<Start> {
  const start = await claimRow(ctx);
  ctx.state.ledgerChecked();
  return start;
}

async function claimRow(ctx: ActionContext): Promise<Start> {
  const { input, state } = ctx;
  const { recordLedger, claimLedgerRow } = proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    summary: `ledger: ${input.key}`,
  });
  const claimedAt = state.plannedAt;
  const row = { key: input.key, tenant: input.tenant, requestHash: input.requestHash, owner: input.owner, claimedAt };
  const holder = `action:${workflowInfo().runId}`;
  let claim: LedgerClaim = await claimLedgerRow({ ...row, holder });
  while (claim.kind === 'busy') {
    // A run's act holds the row and is sending now: wait for it to settle the row or let go of it (its lease).
    const leftMs = Date.parse(claim.leaseUntil) - Date.now();
    await sleep(Math.min(Math.max(leftMs, BUSY_POLL_MIN_MS), BUSY_POLL_MAX_MS));
    claim = await claimLedgerRow({ ...row, holder });
  }
  if (claim.kind === 'mismatch') {
    const refusal = mismatch(input, claim.recordedHash);
    state.refuse(refusal);
    await state.fail('IntentMismatch', refusal.message);
    return { kind: 'done' };
  }
  if (claim.kind === 'settled') {
    state.adoptSettled(claim.snapshot);
    return { kind: 'done' };
  }
  const takenFrom = claim.kind === 'handed-over' ? claim.from : undefined;
  const recovered = claim.kind === 'unresolved' ? claim.recovered : undefined;
  // A workflow that recovers a key, or takes it over, numbers its entries after the ones already there.
  const seqBase = recovered ? recovered.seq + 1 : takenFrom ? takenFrom.seq + 1 : 0;
  await state.keepRecordIn({
    entryOf: (index, entry, action) => ({
      ...row,
      holder,
      status: {
        seq: seqBase + index,
        status: entry.to,
        at: entry.at,
        reason: entry.reason,
        ...(entry.by ? { by: entry.by } : {}),
        ...(action.providerRef ? { providerRef: action.providerRef } : {}),
        outcome: ledgerOutcome(action),
        settled: isFinal(entry.to),
      },
    }),
    write: (record) => recordLedger(record),
  });
  // Nothing was sent while the row said `planned`: such an action goes on as a new one.
  if (takenFrom && takenFrom.status !== 'planned') return { kind: 'taken-over', from: takenFrom };
  return claim.kind === 'unresolved' ? { kind: 'recovered', recovered: claim.recovered } : { kind: 'fresh' };
}

/** One line for the ledger's outcome column. */
function ledgerOutcome(s: Readonly<ActionSnapshot>): string {
  if (s.status === 'confirmed' || s.status === 'compensated') return `${s.status}: ${s.providerRef ?? s.summary}`;
  if (s.error) return `${s.status}: ${s.error.code}: ${s.error.message}`;
  return `${s.status}: ${s.summary}`;
}

function mismatch(input: ActionInput, recordedHash: string): RetrysafeError {
  return new RetrysafeError(
    'IntentMismatch',
    `action ${input.key} was claimed with request hash ${recordedHash.slice(0, 12)}… (the ledger's ` +
      `record); this claim carries ${input.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
    { key: input.key, expected: recordedHash, got: input.requestHash, source: 'ledger' },
  );
}
