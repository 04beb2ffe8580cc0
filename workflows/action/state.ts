/**
 * What one action workflow knows, and the only code that changes it. Every status change goes through `move`, which
 * checks the status machine (policies/action-status.ts) before anything is changed, writes the ledger row first (the
 * action's only record), then audits, publishes (Web UI, search attributes) and tells the claimants. The phases
 * (workflows/action/*.ts) decide; the message handlers (handlers.ts) feed this state; neither writes its fields.
 */
import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { appendRequests, type RequestLogEntry } from '../../policies/provider-requests';
import type { DecisionClaims } from '../../policies/signed-decision';
import { isFinal, transition, type ActionStatus } from '../../policies/action-status';
import type { RetrysafeError } from '../../policies/errors';
import type { DryRun } from '../../policies/dry-run';
import type { Json } from '../../policies/tool';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT } from '../../policies/search-attributes';
import {
  actionUpdateSignal,
  type ActionInput,
  type ActionSnapshot,
  type AuditEntry,
  type OperatorResolution,
  type ReconciliationCheck,
  type Settlement,
} from '../../messages/action';
import type { RecordLedgerInput } from '../../activities/record-ledger';
import { DecisionGate } from '../signed-decisions';
import { Evidence } from './evidence';

/** An operator's decision in arrival order; answered once applied or superseded. */
export interface Resolution {
  resolution: OperatorResolution;
  answer?: 'applied' | 'superseded';
}

/** What a status change carries besides the status: who made it, what it found, who already knows. */
export interface Change {
  by?: string;
  /** The executor writes this change to the ledger itself, before it sends (`dispatching` handed to it). */
  byExecutor?: boolean;
  error?: { code: string; message: string };
  providerRef?: string;
  record?: Json | null;
}

/** Writes status changes to the durable ledger before they take effect. */
export interface StatusRecorder {
  /** One change as the ledger takes it; `seq` is the audit index. */
  entryOf(seq: number, entry: AuditEntry, action: Readonly<ActionSnapshot>): RecordLedgerInput;
  write(record: RecordLedgerInput): Promise<void>;
}

export class ActionState {
  private readonly snap: ActionSnapshot;
  /** Provider events and what they were found to be worth. */
  readonly evidence: Evidence;
  /** Checks every signed decision this action takes, against the trust its policy load sets. */
  readonly decisions: DecisionGate;
  private readonly subscribers = new Set<string>();
  private readonly resolutions: Resolution[] = [];
  private readonly notifications = new Set<Promise<void>>();
  private settlementArrived: Settlement | undefined;
  private approvalArrived: { claims: DecisionClaims; publicKeyId: string } | undefined;
  /** Set once the ledger row has been asked: claims may be answered from then on. */
  private ledgerAsked = false;
  /** Why every claim is refused (the ledger holds another request under this key): thrown to each claimant. */
  private refusal: RetrysafeError | undefined;
  private recorder: StatusRecorder | undefined;
  /** The entry handed to the executor, until it answers (then it wrote it before sending, or refused before). */
  private handedToExecutor: RecordLedgerInput | undefined;
  private lastDispatchEnded = 0;

  constructor(private readonly input: ActionInput) {
    this.decisions = new DecisionGate(`action ${input.key}`, input.tenant);
    this.snap = {
      key: input.key,
      operation: input.intent.operation,
      tenant: input.tenant,
      status: 'planned',
      requestHash: input.requestHash,
      owner: input.owner,
      claimants: [input.owner],
      summary: input.key,
      sends: 0,
      dispatches: 0,
      checks: [],
      audit: [
        {
          at: nowIso(),
          from: null,
          to: 'planned',
          reason: `intent persisted (hash ${input.requestHash.slice(0, 12)})`,
        },
      ],
    };
    this.evidence = new Evidence(input.key, (check) => this.snap.checks.push(check), nowIso);
  }

  // ── reads ──

  get status(): ActionStatus {
    return this.snap.status;
  }
  /** When the intent was persisted (the first audit entry): the row's claim time. */
  get plannedAt(): string {
    return this.snap.audit[0].at;
  }
  get dispatches(): number {
    return this.snap.dispatches;
  }
  get decisionMode(): ActionSnapshot['decisionMode'] {
    return this.snap.decisionMode;
  }
  get dryRun(): DryRun | undefined {
    return this.snap.dryRun;
  }
  /** The first signed approval (or rejection) that arrived. */
  get approval(): { claims: DecisionClaims; publicKeyId: string } | undefined {
    return this.approvalArrived;
  }
  get settlement(): Settlement | undefined {
    return this.settlementArrived;
  }
  /** When the last dispatch ended: the provider's read-after-write lag counts from then. */
  get lastDispatchEndedMs(): number {
    return this.lastDispatchEnded;
  }
  /** Claims may be answered: the ledger was asked about the key, or the action is over. */
  get claimsAnswerable(): boolean {
    return this.ledgerAsked || isFinal(this.snap.status);
  }

  snapshot(): ActionSnapshot {
    const s = this.snap;
    const events = this.evidence.all;
    return {
      ...s,
      claimants: [...s.claimants],
      checks: [...s.checks],
      audit: [...s.audit],
      ...(events.length > 0
        ? { events: [...events], conflicts: this.evidence.conflicts(s.status, s.providerRef) }
        : {}),
    };
  }

  // ── what messages bring (handlers.ts) ──

  /** A claimant joins (once), and is told of every change when it gave a workflow to notify. */
  join(claimant: string, notify?: string): void {
    if (!this.snap.claimants.includes(claimant)) this.snap.claimants.push(claimant);
    if (notify) this.subscribers.add(notify);
  }

  /** A watcher is told of every change, without claiming. */
  watch(watcher: string): void {
    this.subscribers.add(watcher);
  }

  /** Throws the refusal every claim gets once the ledger was found to hold another request under this key. */
  refuseClaimIfRefused(): void {
    if (this.refusal) throw this.refusal.toFailure();
  }

  /** The first verified approval or rejection counts; a second one (a double click) is answered with it. */
  approvalArrives(claims: DecisionClaims, publicKeyId: string): { claims: DecisionClaims; publicKeyId: string } {
    this.approvalArrived ??= { claims, publicKeyId };
    return this.approvalArrived;
  }

  settlementArrives(settlement: Settlement): void {
    this.settlementArrived = settlement;
  }

  /** A verified operator's decision waits for review to apply it; the entry is answered then, or superseded. */
  resolutionArrives(resolution: OperatorResolution): Resolution {
    const entry: Resolution = { resolution };
    this.resolutions.push(entry);
    return entry;
  }

  pendingResolution(): Resolution | undefined {
    return this.resolutions.find((r) => r.answer === undefined);
  }

  /** The oldest resolution not answered yet, answered as applied: the caller applies it now. */
  takeResolution(): OperatorResolution | undefined {
    const entry = this.pendingResolution();
    if (entry) entry.answer = 'applied';
    return entry?.resolution;
  }

  // ── what the phases decide ──

  /** The policy the worker loaded: what the action is (summary, preview) and whom it trusts to decide. */
  applyPolicy(policy: { summary: string; preview: unknown; trust: NonNullable<DecisionGate['trust']> }): void {
    this.decisions.trust = policy.trust;
    this.snap.summary = policy.summary;
    upsertMemo({ intentPreview: policy.preview, requestHash: this.input.requestHash, summary: policy.summary });
    this.publish();
  }

  /** From now on every status change is written to the ledger before it takes effect. */
  keepRecordIn(recorder: StatusRecorder): Promise<void> {
    this.recorder = recorder;
    return recorder.write(recorder.entryOf(0, this.snap.audit[0], this.snap));
  }

  /** The ledger entry the executor is to write before it sends, if the last move handed it one. */
  get executorRecord(): RecordLedgerInput | undefined {
    return this.handedToExecutor;
  }

  /**
   * The executor answered, with an outcome or its own refusal: it wrote the entry handed to it before anything was
   * sent, or refused before writing it (nothing was sent: the row keeps no `dispatching` for it).
   */
  executorAnswered(): void {
    this.handedToExecutor = undefined;
  }

  /** The ledger row was asked about the key: claims are answered from now on. */
  ledgerChecked(): void {
    this.ledgerAsked = true;
  }

  /** Refuses every claim, present and future (nothing was or will be sent under this workflow). */
  refuse(refusal: RetrysafeError): void {
    this.refusal = refusal;
  }

  decide(mode: NonNullable<ActionSnapshot['decisionMode']>): void {
    this.snap.decisionMode = mode;
  }

  showDryRun(dryRun: DryRun, mode: string): void {
    this.snap.dryRun = dryRun;
    upsertMemo({ dryRun: { summary: dryRun.summary, target: dryRun.target, scope: dryRun.scope, mode } });
  }

  approved(operator: string, publicKeyId: string, expiresAt: string): void {
    this.snap.approvedBy = operator;
    this.note(`approved (key ${publicKeyId}, expires ${expiresAt})`, operator);
  }

  /** One more dispatch begins. */
  beginDispatch(): void {
    this.snap.dispatches++;
  }

  /** A dispatch ended (with or without a verdict): lookups are trusted only a lag after this. */
  dispatchEnded(): void {
    this.lastDispatchEnded = Date.now();
  }

  /** Adds one dispatch's requests: its count to `sends`, its entries (the latest ones kept) to `requests`. */
  recordRequests(made: { sends?: number; requests?: RequestLogEntry[] }): void {
    appendRequests(this.snap, made);
  }

  recordCheck(check: Omit<ReconciliationCheck, 'at'>): void {
    this.snap.checks.push({ at: nowIso(), ...check });
  }

  /** The one way status changes: checked by the status machine, recorded, audited, published, told to claimants. */
  async move(to: ActionStatus, reason: string, change: Change = {}): Promise<void> {
    const from = this.snap.status;
    this.snap.status = transition(from, to);
    if (change.error) this.snap.error = change.error;
    if (change.providerRef !== undefined) this.snap.providerRef = change.providerRef;
    if (change.record !== undefined) this.snap.record = change.record;
    const entry: AuditEntry = { at: nowIso(), from, to, reason, ...(change.by ? { by: change.by } : {}) };
    this.snap.audit.push(entry);
    // Before the row is taken (a policy refusal, a mismatch) nothing is written: the row is not this workflow's.
    if (this.recorder) await this.record(entry, change.byExecutor === true);
    log.info('action status', { key: this.input.key, from, to, reason });
    this.publish();
    // Claimants learn of each change by signal, in the background: the next step need not wait a workflow task for
    // the delivery (finish awaits them).
    const sent: Promise<void> = this.notifySubscribers().finally(() => this.notifications.delete(sent));
    this.notifications.add(sent);
  }

  fail(code: string, message: string, change: Omit<Change, 'error'> = {}): Promise<void> {
    return this.move('failed', message, { ...change, error: { code, message } });
  }

  /**
   * Restores the outcome an earlier holder of this key settled, as the worker's ledger holds it: not a move of the
   * status machine (nothing happens now), the record of what happened, with its audit trail.
   */
  adoptSettled(recorded: ActionSnapshot): void {
    const s = this.snap;
    s.status = recorded.status;
    // The row's owner acted on it (a run's act, or an earlier workflow's owner): it decides on any undo.
    s.owner = recorded.owner;
    if (recorded.providerRef) s.providerRef = recorded.providerRef;
    if (recorded.status === 'failed') {
      // The ledger's outcome line reads `failed: <code>: <message>`.
      const code = /^failed: ([A-Za-z]+): /.exec(recorded.summary)?.[1] ?? 'SettledInLedger';
      s.error = { code, message: recorded.summary };
    }
    s.source = 'ledger';
    s.audit.push(...recorded.audit.map((e) => ({ ...e, reason: `ledger: ${e.reason}` })));
    this.note(
      `answered from the ledger: an earlier workflow of this key settled it ${recorded.status}` +
        `${recorded.providerRef ? ` (${recorded.providerRef})` : ''}; nothing is sent again`,
    );
    this.publish();
  }

  note(reason: string, by?: string): void {
    this.snap.audit.push({ at: nowIso(), from: this.snap.status, to: this.snap.status, reason, ...(by ? { by } : {}) });
  }

  /** Answers decisions that were overtaken, delivers the last notifications, and lets handlers finish. */
  async finish(): Promise<ActionSnapshot> {
    for (const entry of this.resolutions) entry.answer ??= 'superseded';
    await Promise.all(this.notifications);
    await condition(allHandlersFinished);
    return this.snapshot();
  }

  /**
   * Writes a change to the ledger, or hands it to the executor. An entry handed over without an answer (its attempts
   * died or ran out, and one may have sent) is written first: written already, it is a repeat; if not, the trail
   * keeps it.
   */
  private async record(entry: AuditEntry, byExecutor: boolean): Promise<void> {
    const recorder = this.recorder!;
    const handed = this.handedToExecutor;
    this.handedToExecutor = undefined;
    if (handed) await recorder.write(handed);
    const record = recorder.entryOf(this.snap.audit.length - 1, entry, this.snap);
    if (byExecutor) this.handedToExecutor = record;
    else await recorder.write(record);
  }

  private publish(): void {
    const s = this.snap;
    // The Web UI shows this line on the workflow page: what the action is and where it stands, not JSON.
    setCurrentDetails(
      `**${s.status}** · ${s.summary}${s.providerRef ? ` · ${s.providerRef}` : ''}${s.error ? ` · ${s.error.code}` : ''}`,
    );
    upsertSearchAttributes([
      { key: SA_KIND, value: 'action' },
      { key: SA_STATUS, value: s.status },
      { key: SA_OPERATION, value: s.operation },
      { key: SA_TENANT, value: s.tenant },
      ...(s.providerRef ? [{ key: SA_PROVIDER_REF, value: s.providerRef }] : []),
    ]);
  }

  private async notifySubscribers(): Promise<void> {
    const snap = this.snapshot();
    await Promise.all(
      [...this.subscribers].map(async (id) => {
        try {
          await getExternalWorkflowHandle(id).signal(actionUpdateSignal, snap);
        } catch (err) {
          log.warn('could not notify a claimant', {
            key: this.input.key,
            claimant: id,
            error: (err as Error).message,
          });
        }
      }),
    );
  }
}

export function nowIso(): string {
  return new Date(Date.now()).toISOString();
}
