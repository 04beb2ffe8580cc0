import type { ApplicationFailure } from '@temporalio/activity';
import { Context } from '@temporalio/activity';
import { msToNumber } from '@temporalio/common/lib/time';
import type { ActionLedger, LedgerRow } from '../ledger';
import { parseActionKey } from '../policies/action-key';
import { isFinal, type ActionStatus } from '../policies/action-status';
import { decideAction } from '../policies/decision-table';
import { RetrysafeError } from '../policies/errors';
import { appendRequests } from '../policies/provider-requests';
import { policyForTenant, type TenantPolicyConfig } from '../policies/tenant-policy';
import { DISPATCH_START_TO_CLOSE } from '../policies/timeouts';
import type { ToolRegistry } from '../policies/tool-registry';
import type { ToolDescriptor } from '../policies/tool';
import type { ActionInput, ActionSnapshot, AuditEntry } from '../messages/action';
import { reportedMove, reportedRequests } from '../messages/execution-report';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';
import { auditTrailOf, snapshotFromLedger } from './claim-action';
import type { CrashHook } from './crash-points';
import { systemLeaseClock, type LeaseClock } from './lease-clock';
import { executionReport, type ExecuteInput, type ExecuteOutcome, type SendHooks } from './execute-action';
import type { ExecutionReport } from '../messages/action';
import { claimRecordOf, recordStatusCounted, RUN_HOLDER_PREFIX, timedLedgerWrite } from './record-ledger';

/**
 * How long a run's act holds the row without writing to it: one executor attempt (its start-to-close) and a margin.
 * Past it, an action workflow may take the row over (a stalled or dead owner); every write of the act, and the
 * fence before each send, checks that it still holds the row.
 */
export const ROW_LEASE_MS = msToNumber(DISPATCH_START_TO_CLOSE) + 5_000;

export interface ActOnRecordInput {
  /** The action as the run prepared it; `owner` is the run's workflow ID. */
  action: ActionInput;
  /**
   * One per act, from the run's seeded randomness: every execution of the act carries it (a retried attempt, and the
   * same act run again with a workflow task after a crash), and only they may take the row from each other.
   */
  token: string;
  /**
   * The run's history length when it scheduled this execution of the act. A local activity's attempts count from 1
   * again when its workflow task runs again after a crash; the history has grown by then, so
   * (generation, attempt) orders every execution of one act (docs/architecture.md, "Fencing the act").
   */
  generation: number;
}

/**
 * The act's verdict. `snapshot`: the action settled, by this act (`holder` says as whom; the run's later writes to the
 * row, its settlement, are made as it) or before. `handOver`: someone must decide or wait (a person's confirmation,
 * an unknown outcome, another holder); the run claims the action workflow and waits for its notifications.
 */
export type ActOnRecordResult = { snapshot: ActionSnapshot; holder?: string } | { handOver: string };

export interface ActOnRecordDeps {
  ledger: ActionLedger;
  /** The clock the act's leases are written by; the machine's by default. */
  leaseClock?: LeaseClock;
  tools: ToolRegistry;
  execute: (input: ExecuteInput, hooks?: SendHooks) => Promise<ExecuteOutcome>;
  crash: CrashHook;
  tenantPolicies?: TenantPolicyConfig;
  metrics?: RetrysafeMetrics;
}

/**
 * The happy path of an action with the ledger's row as its record, in the run itself: no action workflow. The run
 * calls it as a local activity (in its own workflow task), or as an activity for a tool whose calls run long.
 *
 *   check (intent, hash, key, policy: automatic, not an undo) ──else──▶ hand over
 *   claim the row, a new one written `planned` (seq 0) in the same transaction (unique key; holder =
 *        │ run/token#generation.attempt, lease); with a key the provider dedupes by, `dispatching` (seq 1) too
 *        │ ─▶ another's, or unresolved ─▶ hand over
 *        │ same request hash, or IntentMismatch; settled ─▶ that outcome, nothing sent
 *   [each send: the fence, as the holder: dispatching written, or read back when the claim wrote it]
 *        ─▶ executor (key, attempt rules)
 *        ─▶ confirmed | failed: the row settles ─▶ the outcome
 *        └▶ unknown: the row records it and is released ─▶ hand over (the action workflow reconciles)
 *
 * "Hand over" is the verdict `{ handOver: why }`: the run claims the action workflow (update-with-start, the run
 * notified), which takes the row over by compare-and-swap of its epoch once this act has let go of it or its lease
 * ended. An execution that dies is run again by Temporal (a retried attempt, or the run's workflow task again); it
 * takes the row from the dead one (same token, an earlier generation or attempt) and, when the row says `dispatching`,
 * follows the executor's rules for a possibly sent request, never a blind resend.
 */
export function createActOnRecordActivity(deps: ActOnRecordDeps) {
  const metrics = deps.metrics ?? noRetrysafeMetrics;
  const withTimedWrites = {
    ...deps,
    metrics,
    timed: timedLedgerWrite(metrics),
    leaseFromNow: leaseFrom(deps.leaseClock ?? systemLeaseClock),
  };
  return (input: ActOnRecordInput) => actOnRecord(withTimedWrites, input);
}

type Deps = ActOnRecordDeps & {
  metrics: RetrysafeMetrics;
  timed: ReturnType<typeof timedLedgerWrite>;
  /** When a lease taken now ends, by the act's lease clock. */
  leaseFromNow: () => string;
};

async function actOnRecord(deps: Deps, input: ActOnRecordInput): Promise<ActOnRecordResult> {
  const { action } = input;
  const { ledger } = deps;
  const checked = checkAct(deps, action);
  if ('handOver' in checked) return handOver(action, checked.handOver);
  const taken = await takeRow(deps, ledger, input, checked.tool);
  if (!(taken instanceof RowHold)) return taken;
  const hold = taken;
  const toolName = deps.tools.get(action.intent.operation).name;
  deps.crash('after-row-claimed', toolName);
  if (hold.status !== 'planned' && hold.status !== 'dispatching') return handOver(action, `the row is ${hold.status}`);
  const report = await executionReport(() =>
    deps.execute(
      {
        key: action.key,
        intent: action.intent,
        requestHash: action.requestHash,
        // `dispatching` is written before any send: a row still `planned` proves no earlier execution sent. One that
        // says `dispatching` may have reached the provider, whatever this execution's attempt number. What it may
        // have sent is not in this execution's request log: the row's audit trail shows it (`unrecordedSends`).
        // A row this execution created is as unsent as a `planned` one, even when its claim wrote `dispatching`.
        ...(hold.isNew || hold.status === 'planned'
          ? { mode: 'first', earlierAttemptsUnsent: true }
          : { mode: 'maybe-sent' }),
      },
      { beforeSend: () => hold.fence() },
    ),
  );
  deps.crash('before-row-settles', toolName);
  const verdict = await settle(deps, input, hold, report);
  deps.crash('after-row-settled', toolName);
  return verdict;
}

/**
 * Takes the action's row for this execution: a new row, or one an earlier execution of this act held (taken over at
 * its epoch). Anything else is answered here: a settled row's outcome, or a handover to the action workflow.
 */
async function takeRow(
  deps: Deps,
  ledger: ActionLedger,
  input: ActOnRecordInput,
  tool: ToolDescriptor,
): Promise<RowHold | ActOnRecordResult> {
  const { action } = input;
  const mine = actHolder(input, Context.current().info.attempt);
  const { timed } = deps;
  const claimedAt = new Date().toISOString();
  const summary = deps.tools.summarize(action.intent);
  // A new row is written with its `planned` entry, in one transaction: the intent is on record in one durable write.
  const planned = {
    reason: `intent persisted (hash ${action.requestHash.slice(0, 12)})`,
    outcome: `planned: ${summary}`,
  };
  // And with its `dispatching` entry too when a resend is safe by the key (docs/architecture.md, "Fencing the act").
  const dispatching = dispatchesWithClaim(tool)
    ? { reason: DISPATCH_WITH_CLAIM, outcome: `dispatching: ${summary}` }
    : undefined;
  const claim = await timed('claim', () =>
    ledger.claimRow({
      ...claimRecordOf({ ...action, claimedAt }),
      holder: mine.holder,
      leaseUntil: deps.leaseFromNow(),
      planned,
      ...(dispatching ? { dispatching } : {}),
    }),
  );
  const row = claim.row;
  if (row.requestHash !== action.requestHash) throw mismatch(action, row.requestHash);
  if (claim.kind === 'new') {
    const operation = parseActionKey(action.key).operation;
    deps.metrics.statusChange(operation, action.tenant, 'planned');
    if (dispatching) deps.metrics.statusChange(operation, action.tenant, 'dispatching');
    return new RowHold(deps, ledger, action, mine.holder, row, {
      at: claimedAt,
      reason: planned.reason,
      ...(dispatching ? { dispatching: dispatching.reason } : {}),
    });
  }
  if (claim.kind === 'held') return new RowHold(deps, ledger, action, mine.holder, row);
  const theirs = row.holder ? executionOf(row.holder, input) : undefined;
  if (isFinal(row.status)) {
    // Settled by an earlier execution of this act that died before the run recorded its verdict: the run's later
    // writes to the row are made as that holder.
    const snapshot = await snapshotFromLedger(ledger, row);
    return theirs && row.holder ? { snapshot, holder: row.holder } : { snapshot };
  }
  // Only an earlier execution of this act is taken from; anyone else's row goes to the action workflow.
  if (!theirs) return handOver(action, `the row is held by ${row.holder ?? 'an earlier workflow'}`);
  // A later execution holds it: this one was given up on (it stalled, or its worker froze) and must not act.
  if (!isEarlier(theirs, mine)) {
    throw new Error(
      `${row.holder} holds the row of ${action.key}; ${mine.holder} is not later, so it is stale and stops`,
    );
  }
  const taken = await timed('takeover', () => ledger.takeOver(action.key, row.epoch, mine.holder, deps.leaseFromNow()));
  if (!taken) return handOver(action, 'the row moved while this execution took it over');
  return new RowHold(deps, ledger, action, mine.holder, taken);
}

/** The `dispatching` entry's reason when the claim writes it. */
export const DISPATCH_WITH_CLAIM = 'dispatch, by the run, on record with its claim (the key makes a resend safe)';

/**
 * Whether the act's claim writes `dispatching` with the row: a mutation whose provider dedupes by the key (or commits
 * the effect with its dedupe record). An execution that dies between the claim and the send leaves a row that says
 * possibly sent, and the next one resends under the same key, which the provider answers once; one durable write is
 * saved on every action. A tool without a key (`none`: a possibly sent request is `unknown`; `lookup`: a lookup, and
 * the provider's lag, before any resend) keeps `planned` until its first send, which proves that nothing was sent.
 */
export function dispatchesWithClaim(tool: Pick<ToolDescriptor, 'kind' | 'dedupe'>): boolean {
  return tool.kind !== 'read' && (tool.dedupe === 'idempotency-key' || tool.dedupe === 'transactional');
}

/** One execution of an act: its place in the order of the act's executions. */
interface ActExecution {
  generation: number;
  attempt: number;
}

/** The holder an execution writes as: `run:<owner>/<token>#<generation>.<attempt>`. */
function actHolder(input: ActOnRecordInput, attempt: number): ActExecution & { holder: string } {
  const { generation } = input;
  return { generation, attempt, holder: `${actPrefix(input)}${generation}.${attempt}` };
}

/** The execution of this act a holder names, or undefined when the holder is not this act's. */
function executionOf(holder: string, input: ActOnRecordInput): ActExecution | undefined {
  const prefix = actPrefix(input);
  if (!holder.startsWith(prefix)) return undefined;
  const m = /^(\d+)\.(\d+)$/.exec(holder.slice(prefix.length));
  return m ? { generation: Number(m[1]), attempt: Number(m[2]) } : undefined;
}

/** Whether `a` ran before `b`: an earlier workflow task of the run, or an earlier attempt in the same one. */
function isEarlier(a: ActExecution, b: ActExecution): boolean {
  return a.generation < b.generation || (a.generation === b.generation && a.attempt < b.attempt);
}

function actPrefix(input: ActOnRecordInput): string {
  return `${RUN_HOLDER_PREFIX}${input.action.owner}/${input.token}#`;
}

/** The executor's verdict on the row: confirmed or failed settles it; unknown records it, lets go, hands over. */
async function settle(
  deps: Deps,
  input: ActOnRecordInput,
  hold: RowHold,
  report: ExecutionReport,
): Promise<ActOnRecordResult> {
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
  if (!recorded) return handOver(action, `the row was taken before it recorded ${move.to}`);
  if (move.to === 'unknown') {
    // Let go of the row at once, so the action workflow takes it over now rather than when the lease ends.
    await hold.release();
    return handOver(action, move.reason);
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
    // A row taken from an earlier execution holds its entries too: the ledger has the whole trail.
    audit: await hold.auditTrail(),
    source: 'ledger',
  };
  appendRequests(snapshot, reportedRequests(report));
  return { holder: hold.holder, snapshot };
}

function leaseFrom(clock: LeaseClock): () => string {
  return () => new Date(clock() + ROW_LEASE_MS).toISOString();
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
  /**
   * What the next fence does: `write` `dispatching` (the first send); `read` the row back (the first send, when the
   * claim wrote `dispatching`); `take-over` the row again at its epoch (every send after the first).
   */
  private nextFence: 'write' | 'read' | 'take-over';
  status: ActionStatus;
  readonly owner: string;
  /** Whether this execution created the row (its audit trail is then this execution's own entries). */
  readonly isNew: boolean;

  constructor(
    private readonly deps: Deps,
    private readonly ledger: ActionLedger,
    private readonly action: ActionInput,
    readonly holder: string,
    row: LedgerRow,
    /** For a row this execution created: its `planned` entry, and its `dispatching` one, written with the row. */
    created?: { at: string; reason: string; dispatching?: string },
  ) {
    this.seq = row.seq;
    this.epoch = row.epoch;
    this.status = row.status;
    this.owner = row.owner;
    this.isNew = created !== undefined;
    this.nextFence = created?.dispatching !== undefined ? 'read' : 'write';
    if (created) this.audit.push({ at: created.at, from: null, to: 'planned', reason: created.reason });
    if (created?.dispatching !== undefined) {
      this.audit.push({ at: created.at, from: 'planned', to: 'dispatching', reason: created.dispatching });
    }
  }

  /** One status change as the holder; false when the row is no longer this act's. */
  async write(to: ActionStatus, reason: string, extra: { providerRef?: string; outcome?: string } = {}) {
    const { action, deps } = this;
    const at = new Date().toISOString();
    const next = this.seq + 1;
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
    this.audit.push({ at, from: this.status, to, reason });
    this.seq = next;
    this.status = to;
    return true;
  }

  /** Before every send: a row another took meanwhile stops it. */
  async fence(): Promise<void> {
    const fence = this.nextFence;
    this.nextFence = 'take-over';
    if (fence === 'read') {
      // `dispatching` is on record already: what the fence must still prove is that the row is this execution's.
      if (await this.stillHeld()) return;
    } else if (fence === 'write') {
      const reason = this.status === 'planned' ? 'dispatch, by the run' : 'resend with the same key, by the run';
      if (await this.write('dispatching', reason)) return;
    } else {
      const again = await this.takeOver(this.deps.leaseFromNow());
      if (again) {
        this.epoch = again.epoch;
        return;
      }
    }
    throw new Error(
      `${this.holder} no longer holds the row of ${this.action.key}; nothing more is sent from this attempt`,
    );
  }

  /** Whether the row is still this execution's, at its epoch, and unsettled: one read, nothing written. */
  private async stillHeld(): Promise<boolean> {
    const row = await this.ledger.get(this.action.key);
    return row?.holder === this.holder && row.epoch === this.epoch && !isFinal(row.status);
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

/**
 * The act's checks: why this action needs a person or a wait (its workflow), or the tool the run acts with on the row
 * itself.
 */
function checkAct(deps: ActOnRecordDeps, action: ActionInput): { handOver: string } | { tool: ToolDescriptor } {
  if (action.compensation) return { handOver: 'an undo waits for a person when it fails' };
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
  return decision.mode === 'automatic' ? { tool } : { handOver: `the policy says ${decision.mode}` };
}

/** The verdict that someone must decide or wait: the run claims the action workflow, which takes the row over. */
function handOver(action: ActionInput, why: string): ActOnRecordResult {
  Context.current().log.info('hand over to the action workflow', { key: action.key, why });
  return { handOver: why };
}

function mismatch(action: ActionInput, other: string, what = 'the ledger holds'): ApplicationFailure {
  return new RetrysafeError(
    'IntentMismatch',
    `action ${action.key}: ${what} request hash ${other.slice(0, 12)}…; this act carries ` +
      `${action.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
    { key: action.key, expected: other, got: action.requestHash, source: 'ledger' },
  ).toFailure();
}
