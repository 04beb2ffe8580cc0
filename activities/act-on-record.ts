import type { ApplicationFailure } from '@temporalio/activity';
import { Context } from '@temporalio/activity';
import { msToNumber } from '@temporalio/common/lib/time';
import type { LedgerRow } from '../ledger';
import { isFinal, type ActionStatus } from '../policies/action-status';
import { decideAction } from '../policies/decision-table';
import { RetrysafeError } from '../policies/errors';
import { appendRequests, requestLogIn } from '../policies/provider-requests';
import { policyForTenant, type TenantPolicyConfig } from '../policies/tenant-policy';
import { CLAIM_START_TO_CLOSE, DISPATCH_START_TO_CLOSE, HEARTBEAT_INTERVAL_MS } from '../policies/timeouts';
import type { ActionInput, ActionSnapshot, AuditEntry } from '../messages/action';
import { reportedMove, reportedRequests } from '../messages/dispatch-report';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';
import { auditTrailOf, claimAction, snapshotFromLedger, within, type ClaimDeps } from './claim-action';
import type { CrashHook } from './crash-points';
import { executionReport, type ExecuteInput, type ExecuteOutcome, type SendHooks } from './execute-action';
import { claimRecordOf, recordStatusCounted, RUN_HOLDER_PREFIX, timedLedgerWrite } from './record-ledger';

/**
 * How long a run's act holds the row without writing to it: one executor attempt (its start-to-close) and a margin.
 * Past it, an action workflow may take the row over (a stalled or dead owner); every write of the act, and the
 * fence before each send, checks that it still holds the row.
 */
export const ROW_LEASE_MS = msToNumber(DISPATCH_START_TO_CLOSE) + 5_000;
/** How long a handover waits for the action workflow to answer its claim before the attempt gives up. */
const HANDOVER_WAIT_MS = msToNumber(CLAIM_START_TO_CLOSE);

export interface ActOnRecordInput {
  /** The action as the run prepared it; `owner` is the run's workflow ID. */
  action: ActionInput;
  /** One per act: every attempt of the activity carries it, and only they may take the row from each other. */
  token: string;
}

export interface ActOnRecordResult {
  /**
   * The action now: settled by this act (`source: 'ledger'`), settled before, or the action workflow's answer after
   * a handover (the run then waits for its notifications).
   */
  snapshot: ActionSnapshot;
  /** The holder this act settled the row as: the run's later writes to it (its settlement) are made as it. */
  holder?: string;
}

export interface ActOnRecordDeps extends ClaimDeps {
  execute: (input: ExecuteInput, hooks?: SendHooks) => Promise<ExecuteOutcome>;
  crash: CrashHook;
  tenantPolicies?: TenantPolicyConfig;
  metrics?: RetrysafeMetrics;
}

/**
 * The happy path of an action with the ledger's row as its record, in one activity of the run: no action workflow.
 *
 *   check (intent, hash, key, policy: automatic, not an undo) ──else──▶ hand over
 *   claim the row (unique key; holder = run/token#attempt, lease) ─▶ another's, or unresolved ─▶ hand over
 *        │ same request hash, or IntentMismatch; settled ─▶ that outcome, nothing sent
 *   planned (seq 0) ─▶ [each send: dispatching, written as the holder: the fence] ─▶ executor (key, attempt rules)
 *        ─▶ confirmed | failed: the row settles ─▶ the outcome
 *        └▶ unknown: the row records it and is released ─▶ hand over (the action workflow reconciles)
 *
 * "Hand over" claims the action workflow (update-with-start, the run notified), which takes the row over by
 * compare-and-swap of its epoch once this act has let go of it or its lease ended: someone must decide or wait.
 * An attempt that dies is retried by Temporal; the next attempt takes the row from the dead one (same token) and,
 * when the row says `dispatching`, follows the executor's rules for a possibly sent request, never a blind resend.
 */
export function createActOnRecordActivity(deps: ActOnRecordDeps) {
  const metrics = deps.metrics ?? noRetrysafeMetrics;
  const timed = timedLedgerWrite(metrics);

  return async function actOnRecord(input: ActOnRecordInput): Promise<ActOnRecordResult> {
    const ctx = Context.current();
    const { action, token } = input;
    const { ledger } = deps;
    // A worker without the ledger has no row to take: the action workflow is the record there.
    if (!ledger) return { snapshot: await handOver(deps, input, 'this worker keeps no ledger') };
    const why = needsAPerson(deps, action);
    if (why) return { snapshot: await handOver(deps, input, why) };

    const holder = `${RUN_HOLDER_PREFIX}${action.owner}/${token}#${ctx.info.attempt}`;
    const lease = () => new Date(Date.now() + ROW_LEASE_MS).toISOString();
    const claimedAt = new Date().toISOString();
    const claim = await timed('claim', () =>
      ledger.claimRow({ ...claimRecordOf({ ...action, claimedAt }), holder, leaseUntil: lease() }),
    );
    let row: LedgerRow = claim.row;
    if (row.requestHash !== action.requestHash) throw mismatch(action, row.requestHash);
    if (claim.kind === 'other') {
      if (isFinal(row.status)) return { snapshot: await snapshotFromLedger(ledger, row) };
      // Only an earlier attempt of this act is taken from; anyone else's row goes to the action workflow.
      const actPrefix = `${RUN_HOLDER_PREFIX}${action.owner}/${token}#`;
      if (!row.holder?.startsWith(actPrefix)) {
        return { snapshot: await handOver(deps, input, `the row is held by ${row.holder ?? 'an earlier workflow'}`) };
      }
      // A later attempt holds it: this one was given up on (it stalled, or its worker froze) and must not act.
      const holding = Number(row.holder.slice(actPrefix.length));
      if (!(holding < ctx.info.attempt)) {
        throw new Error(
          `attempt ${holding} of this act holds the row of ${action.key}; attempt ${ctx.info.attempt} is stale and stops`,
        );
      }
      const taken = await timed('takeover', () => ledger.takeOver(action.key, row.epoch, holder, lease()));
      if (!taken) return { snapshot: await handOver(deps, input, 'the row moved while this attempt took it over') };
      row = taken;
    }
    const tool = deps.tools.get(action.intent.operation);
    deps.crash('after-row-claimed', tool.name);
    if (row.status !== 'planned' && row.status !== 'dispatching') {
      return { snapshot: await handOver(deps, input, `the row is ${row.status}`) };
    }

    const audit: AuditEntry[] = [];
    let seq = row.seq;
    let status: ActionStatus = row.status;
    /** One status change as the holder; false when the row is no longer this act's (an alarm is on record). */
    const write = async (to: ActionStatus, reason: string, extra: { providerRef?: string; outcome?: string } = {}) => {
      const at = new Date().toISOString();
      const next = claim.kind === 'new' && audit.length === 0 ? 0 : seq + 1;
      const w = await recordStatusCounted(ledger, metrics, action.tenant, {
        key: action.key,
        seq: next,
        status: to,
        at,
        reason,
        holder,
        ...extra,
        outcome: extra.outcome ?? `${to}: ${deps.tools.summarize(action.intent)}`,
        ...(isFinal(to) ? { settled: true } : {}),
      });
      if (!w.applied) return false;
      audit.push({ at, from: audit.length === 0 && next === 0 ? null : status, to, reason });
      seq = next;
      status = to;
      return true;
    };
    if (
      claim.kind === 'new' &&
      !(await write('planned', `intent persisted (hash ${action.requestHash.slice(0, 12)})`))
    ) {
      return { snapshot: await handOver(deps, input, 'the new row was taken before its first entry') };
    }

    // Before every send: `dispatching` on record as this holder (the first time), or the row taken again at its
    // epoch (later sends of this attempt). A row another took meanwhile stops the send.
    let epoch = row.epoch;
    let fencedOnce = false;
    const beforeSend = async () => {
      if (!fencedOnce) {
        fencedOnce = true;
        const reason = status === 'planned' ? 'dispatch, by the run' : 'resend with the same key, by the run';
        if (await write('dispatching', reason)) return;
      } else {
        const again = await timed('takeover', () => ledger.takeOver(action.key, epoch, holder, lease()));
        if (again) {
          epoch = again.epoch;
          return;
        }
      }
      throw new Error(`${holder} no longer holds the row of ${action.key}; nothing more is sent from this attempt`);
    };

    const report = await executionReport(() =>
      deps.execute(
        {
          key: action.key,
          intent: action.intent,
          requestHash: action.requestHash,
          mode: 'first',
          // `dispatching` is written before any send: a row still `planned` proves no earlier attempt sent.
          ...(row.status === 'planned' ? { earlierAttemptsUnsent: true } : {}),
        },
        { beforeSend },
      ),
    );
    deps.crash('before-row-settles', tool.name);
    const move = reportedMove(report);
    const outcomeLine =
      move.to === 'confirmed'
        ? `confirmed: ${move.providerRef}`
        : move.error
          ? `failed: ${move.error.message}`
          : undefined;
    const recorded = await write(move.to, move.reason, {
      ...(move.providerRef ? { providerRef: move.providerRef } : {}),
      ...(outcomeLine ? { outcome: outcomeLine } : {}),
    });
    if (!recorded) return { snapshot: await handOver(deps, input, `the row was taken before it recorded ${move.to}`) };
    if (move.to === 'unknown') {
      // Let go of the row at once, so the action workflow takes it over now rather than when the lease ends.
      await timed('takeover', () => ledger.takeOver(action.key, epoch, holder, new Date().toISOString()));
      return { snapshot: await handOver(deps, input, move.reason) };
    }
    const snapshot: ActionSnapshot = {
      key: action.key,
      operation: action.intent.operation,
      tenant: action.tenant,
      status: move.to,
      requestHash: action.requestHash,
      owner: row.owner,
      claimants: [row.owner],
      summary: deps.tools.summarize(action.intent),
      ...(move.providerRef ? { providerRef: move.providerRef } : {}),
      ...(move.record !== undefined ? { record: move.record } : {}),
      ...(move.error ? { error: move.error } : {}),
      sends: 0,
      dispatches: 1,
      checks: [],
      // A row taken from an earlier attempt holds that attempt's entries too: the ledger has the whole trail.
      audit: claim.kind === 'new' ? audit : auditTrailOf(await ledger.audit(action.key)),
      source: 'ledger',
    };
    appendRequests(snapshot, reportedRequests(report));
    return { holder, snapshot };
  };
}

/** Why this action needs a person or a wait (its workflow), or undefined when the run may act on the row itself. */
function needsAPerson(deps: ActOnRecordDeps, action: ActionInput): string | undefined {
  if (action.compensation) return 'an undo waits for a person when it fails';
  let intent;
  try {
    intent = deps.tools.parseIntent(action.intent);
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
  const hash = deps.tools.hash(intent);
  if (hash !== action.requestHash) throw mismatch(action, hash, 'its intent hashes to');
  const tool = deps.tools.describe(intent);
  const tenantPolicy = deps.tenantPolicies ? policyForTenant(deps.tenantPolicies, action.tenant) : undefined;
  const decision = decideAction(tool, intent, tenantPolicy);
  return decision.mode === 'automatic' ? undefined : `the policy says ${decision.mode}`;
}

/**
 * The action workflow takes over: claimed with update-with-start, the run notified of every change. Its own ledger
 * claim decides from the row (settled, another's, or this act's to reconcile), and its answer is returned.
 */
async function handOver(deps: ActOnRecordDeps, input: ActOnRecordInput, why: string): Promise<ActionSnapshot> {
  const ctx = Context.current();
  const { action } = input;
  ctx.log.info('hand over to the action workflow', { key: action.key, why });
  const carried = requestLogIn(ctx.info.heartbeatDetails);
  const beat = setInterval(() => ctx.heartbeat(carried), HEARTBEAT_INTERVAL_MS);
  try {
    return await within(
      claimAction(deps, {
        action,
        claim: { requestHash: action.requestHash, claimant: action.owner, notify: action.owner },
      }),
      HANDOVER_WAIT_MS,
      `the action workflow of ${action.key} did not answer within ${HANDOVER_WAIT_MS} ms`,
    );
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  } finally {
    clearInterval(beat);
  }
}

function mismatch(action: ActionInput, other: string, what = 'the ledger holds'): ApplicationFailure {
  return new RetrysafeError(
    'IntentMismatch',
    `action ${action.key}: ${what} request hash ${other.slice(0, 12)}…; this act carries ` +
      `${action.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
    { key: action.key, expected: other, got: action.requestHash, source: 'ledger' },
  ).toFailure();
}
