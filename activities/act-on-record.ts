import type { ApplicationFailure } from '@temporalio/activity';
import { Context } from '@temporalio/activity';
import { msToNumber } from '@temporalio/common/lib/time';
import type { ActionLedger, LedgerRow } from '../ledger';
import { isFinal, type ActionStatus } from '../policies/action-status';
import { decideAction } from '../policies/decision-table';
import { RetrysafeError } from '../policies/errors';
import { appendRequests, requestLogIn } from '../policies/provider-requests';
import { policyForTenant, type TenantPolicyConfig } from '../policies/tenant-policy';
import { CLAIM_START_TO_CLOSE, DISPATCH_START_TO_CLOSE, HEARTBEAT_INTERVAL_MS } from '../policies/timeouts';
import type { ActionInput, ActionSnapshot, AuditEntry } from '../messages/action';
import { reportedMove, reportedRequests } from '../messages/execution-report';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';
import { auditTrailOf, claimAction, snapshotFromLedger, within, type ClaimDeps } from './claim-action';
import type { CrashHook } from './crash-points';
import { executionReport, type ExecuteInput, type ExecuteOutcome, type SendHooks } from './execute-action';
import type { ExecutionReport } from '../messages/action';
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
  const withTimedWrites = { ...deps, metrics, timed: timedLedgerWrite(metrics) };
  return (input: ActOnRecordInput) => actOnRecord(withTimedWrites, input);
}

type Deps = ActOnRecordDeps & { metrics: RetrysafeMetrics; timed: ReturnType<typeof timedLedgerWrite> };

async function actOnRecord(deps: Deps, input: ActOnRecordInput): Promise<ActOnRecordResult> {
  const { action } = input;
  const { ledger } = deps;
  const why = needsAPerson(deps, action);
  if (why) return { snapshot: await handOver(deps, input, why) };
  const taken = await takeRow(deps, ledger, input);
  if (!(taken instanceof RowHold)) return taken;
  const hold = taken;
  const toolName = deps.tools.get(action.intent.operation).name;
  deps.crash('after-row-claimed', toolName);
  if (hold.status !== 'planned' && hold.status !== 'dispatching') {
    return { snapshot: await handOver(deps, input, `the row is ${hold.status}`) };
  }
  if (hold.isNew && !(await hold.write('planned', `intent persisted (hash ${action.requestHash.slice(0, 12)})`))) {
    return { snapshot: await handOver(deps, input, 'the new row was taken before its first entry') };
  }
  const sentBefore = hold.status !== 'planned';
  const report = await executionReport(() =>
    deps.execute(
      {
        key: action.key,
        intent: action.intent,
        requestHash: action.requestHash,
        mode: 'first',
        // `dispatching` is written before any send: a row still `planned` proves no earlier attempt sent.
        ...(sentBefore ? {} : { earlierAttemptsUnsent: true }),
      },
      { beforeSend: () => hold.fence() },
    ),
  );
  deps.crash('before-row-settles', toolName);
  return settle(deps, input, hold, report);
}

/**
 * Takes the action's row for this attempt: a new row, or one an earlier attempt of this act held (taken over at its
 * epoch). Anything else is answered here: a settled row's outcome, or a handover to the action workflow.
 */
async function takeRow(
  deps: Deps,
  ledger: ActionLedger,
  input: ActOnRecordInput,
): Promise<RowHold | ActOnRecordResult> {
  const { action, token } = input;
  const attempt = Context.current().info.attempt;
  const { timed } = deps;
  const holder = `${RUN_HOLDER_PREFIX}${action.owner}/${token}#${attempt}`;
  const claimedAt = new Date().toISOString();
  const claim = await timed('claim', () =>
    ledger.claimRow({ ...claimRecordOf({ ...action, claimedAt }), holder, leaseUntil: leaseFromNow() }),
  );
  const row = claim.row;
  if (row.requestHash !== action.requestHash) throw mismatch(action, row.requestHash);
  if (claim.kind !== 'other') return new RowHold(deps, ledger, action, holder, row, claim.kind === 'new');
  if (isFinal(row.status)) return { snapshot: await snapshotFromLedger(ledger, row) };
  // Only an earlier attempt of this act is taken from; anyone else's row goes to the action workflow.
  const actPrefix = `${RUN_HOLDER_PREFIX}${action.owner}/${token}#`;
  if (!row.holder?.startsWith(actPrefix)) {
    return { snapshot: await handOver(deps, input, `the row is held by ${row.holder ?? 'an earlier workflow'}`) };
  }
  // A later attempt holds it: this one was given up on (it stalled, or its worker froze) and must not act.
  const holding = Number(row.holder.slice(actPrefix.length));
  if (!(holding < attempt)) {
    throw new Error(
      `attempt ${holding} of this act holds the row of ${action.key}; attempt ${attempt} is stale and stops`,
    );
  }
  const taken = await timed('takeover', () => ledger.takeOver(action.key, row.epoch, holder, leaseFromNow()));
  if (!taken) return { snapshot: await handOver(deps, input, 'the row moved while this attempt took it over') };
  return new RowHold(deps, ledger, action, holder, taken, false);
}

/** The executor's verdict on the row: confirmed or failed settles it; unknown records it, lets go, hands over. */
async function settle(deps: Deps, input: ActOnRecordInput, hold: RowHold, report: ExecutionReport) {
  const { action } = input;
  const move = reportedMove(report);
  const outcomeLine =
    move.to === 'confirmed'
      ? `confirmed: ${move.providerRef}`
      : move.error
        ? `failed: ${move.error.message}`
        : undefined;
  const recorded = await hold.write(move.to, move.reason, {
    ...(move.providerRef ? { providerRef: move.providerRef } : {}),
    ...(outcomeLine ? { outcome: outcomeLine } : {}),
  });
  if (!recorded) return { snapshot: await handOver(deps, input, `the row was taken before it recorded ${move.to}`) };
  if (move.to === 'unknown') {
    // Let go of the row at once, so the action workflow takes it over now rather than when the lease ends.
    await hold.release();
    return { snapshot: await handOver(deps, input, move.reason) };
  }
  const snapshot: ActionSnapshot = {
    key: action.key,
    operation: action.intent.operation,
    tenant: action.tenant,
    status: move.to,
    requestHash: action.requestHash,
    owner: hold.owner,
    claimants: [hold.owner],
    summary: deps.tools.summarize(action.intent),
    ...(move.providerRef ? { providerRef: move.providerRef } : {}),
    ...(move.record !== undefined ? { record: move.record } : {}),
    ...(move.error ? { error: move.error } : {}),
    sends: 0,
    dispatches: 1,
    checks: [],
    // A row taken from an earlier attempt holds that attempt's entries too: the ledger has the whole trail.
    audit: await hold.auditTrail(),
    source: 'ledger',
  };
  appendRequests(snapshot, reportedRequests(report));
  return { holder: hold.holder, snapshot };
}

function leaseFromNow(): string {
  return new Date(Date.now() + ROW_LEASE_MS).toISOString();
}

/**
 * This attempt's hold on the row: every write is made as its holder, and fails (false) once the row is no longer
 * its own (an alarm is on record then). The fence before each send is `dispatching` the first time, the row taken
 * again at its epoch after.
 */
class RowHold {
  private readonly audit: AuditEntry[] = [];
  private seq: number;
  private epoch: number;
  private fenced = false;
  status: ActionStatus;
  readonly owner: string;

  constructor(
    private readonly deps: Deps,
    private readonly ledger: ActionLedger,
    private readonly action: ActionInput,
    readonly holder: string,
    row: LedgerRow,
    readonly isNew: boolean,
  ) {
    this.seq = row.seq;
    this.epoch = row.epoch;
    this.status = row.status;
    this.owner = row.owner;
  }

  /** One status change as the holder; false when the row is no longer this act's. */
  async write(to: ActionStatus, reason: string, extra: { providerRef?: string; outcome?: string } = {}) {
    const { action, deps } = this;
    const at = new Date().toISOString();
    const next = this.isNew && this.audit.length === 0 ? 0 : this.seq + 1;
    const w = await recordStatusCounted(this.ledger, deps.metrics, action.tenant, {
      key: action.key,
      seq: next,
      status: to,
      at,
      reason,
      holder: this.holder,
      ...extra,
      outcome: extra.outcome ?? `${to}: ${deps.tools.summarize(action.intent)}`,
      ...(isFinal(to) ? { settled: true } : {}),
    });
    if (!w.applied) return false;
    this.audit.push({ at, from: this.audit.length === 0 && next === 0 ? null : this.status, to, reason });
    this.seq = next;
    this.status = to;
    return true;
  }

  /** Before every send: a row another took meanwhile stops it. */
  async fence(): Promise<void> {
    if (!this.fenced) {
      this.fenced = true;
      const reason = this.status === 'planned' ? 'dispatch, by the run' : 'resend with the same key, by the run';
      if (await this.write('dispatching', reason)) return;
    } else {
      const again = await this.takeOver(leaseFromNow());
      if (again) {
        this.epoch = again.epoch;
        return;
      }
    }
    throw new Error(
      `${this.holder} no longer holds the row of ${this.action.key}; nothing more is sent from this attempt`,
    );
  }

  /** Lets go of the row now (its lease ends at once). */
  async release(): Promise<void> {
    await this.takeOver(new Date().toISOString());
  }

  /** The act's entries; for a row taken from an earlier attempt, the ledger's whole trail. */
  async auditTrail(): Promise<AuditEntry[]> {
    return this.isNew ? this.audit : auditTrailOf(await this.ledger.audit(this.action.key));
  }

  private takeOver(leaseUntil: string) {
    return this.deps.timed('takeover', () =>
      this.ledger.takeOver(this.action.key, this.epoch, this.holder, leaseUntil),
    );
  }
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
