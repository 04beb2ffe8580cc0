/**
 * The state of one action workflow and the messages that change it. The workflow function
 * (action.ts) decides; this object holds what it decides on, checks every message against it, and
 * publishes each status change to the Web UI, the search attributes and the waiting claimants.
 */
import { appendRequests, type ProviderRequest } from '../policies/provider-requests';
import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Decision, DecisionClaims, SignedDecision } from '../policies/signed-decision';
import { DecisionGate, paramsOf } from './signed-decisions';
import { parseDispatchReport, reportedMove } from '../messages/dispatch-report';
import { isFinal, transition, type ActionStatus } from '../policies/action-status';
import { RetrysafeError } from '../policies/errors';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import {
  OUTCOME_STATUSES,
  actionUpdateSignal,
  claimUpdate,
  dispatchReportSignal,
  outcomeUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  watchUpdate,
  type ActionInput,
  type ActionSnapshot,
  type AuditEntry,
  type ClaimAnswer,
  type DispatchReport,
  type EventConflict,
  type OperatorResolution,
  type ProviderEvent,
  type Settlement,
} from '../messages/action';
import { approveUpdate, dryRunQuery } from '../messages/approval';

type Resolution = { resolution: OperatorResolution; answer?: 'applied' | 'superseded' };

export class ActionState {
  readonly snap: ActionSnapshot;
  private readonly subscribers = new Set<string>();
  private readonly evidence: ProviderEvent[] = [];
  /** Event IDs already cross-checked (by a lookup) or handed to a person; each is weighed once. */
  private readonly weighed = new Set<string>();
  /** Events a lookup contradicted, with why: they are conflicts, never proof. */
  private readonly refuted = new Map<string, string>();
  /** Operator decisions in arrival order; each is answered once applied or superseded. */
  private readonly resolutions: Resolution[] = [];
  private readonly notifications = new Set<Promise<void>>();
  settlement: Settlement | undefined;
  /** The owner's request to send the first dispatch itself: the token of its first claim that asked. */
  sendRequest: string | undefined;
  /** The dispatch the owner was granted: its token, how often a claim was answered "send", its report. */
  grant: { token: string; answers: number; report?: DispatchReport } | undefined;
  /** Set once the main flow has decided who sends the first dispatch; the owner's claim answers then. */
  firstDispatchDecided = false;
  /** Per token of the owner's: the highest activity attempt that claimed with it (only that one is granted). */
  private readonly sendAttempts = new Map<string, number>();
  /** Tokens whose activity gave up before it was granted: never granted, the action sends itself. */
  private readonly withdrawn = new Set<string>();
  /** The token of the owner's latest claim: the owner that knows a report's outcome holds this one. */
  private ownerToken: string | undefined;
  /** Checks every signed decision this action takes, against the trust its policy load sets. */
  readonly decisions: DecisionGate;
  approval: { claims: DecisionClaims; publicKeyId: string } | undefined;
  /** Claims are answered only after the worker's ledger has been asked about the key (LEDGER_IN_WORKER_PATCH). */
  answersWaitForLedger = false;
  /** Set once the worker's ledger has been asked (or there is none): claims may be answered from then on. */
  ledgerChecked = false;
  /** A plain claim answers after the results its workflow task brought are applied (CURRENT_CLAIM_ANSWERS_PATCH). */
  currentAnswers = false;
  /** Why every claim is refused (the ledger holds another request under this key): thrown to each claimant. */
  private refusal: RetrysafeError | undefined;

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
  }

  get status(): ActionStatus {
    return this.snap.status;
  }

  snapshot(): ActionSnapshot {
    const s = this.snap;
    return {
      ...s,
      claimants: [...s.claimants],
      checks: [...s.checks],
      audit: [...s.audit],
      // The owner sends while its grant is open; the field is derived from the grant, never kept beside it.
      ...(this.grant && !this.grant.report ? { dispatcher: this.input.owner } : {}),
      ...(this.evidence.length > 0 ? { events: [...this.evidence], conflicts: this.conflicts() } : {}),
    };
  }

  /**
   * Adds one dispatch's requests: its count to `sends` and its entries (the latest MAX_SHOWN_REQUESTS of
   * the action) to `requests`.
   */
  recordRequests(made: { sends?: number; requests?: ProviderRequest[] }): void {
    appendRequests(this.snap, made);
  }

  /** Installs every handler. Validators refuse before anything enters history. */
  install(): void {
    const { key, requestHash } = this.input;
    setHandler(statusQuery, () => this.snapshot());
    this.decisions.acceptRefreshes();
    setHandler(dryRunQuery, () => this.snap.dryRun);
    setHandler(
      claimUpdate,
      async (req): Promise<ClaimAnswer> => {
        if (!this.snap.claimants.includes(req.claimant)) this.snap.claimants.push(req.claimant);
        if (req.notify) this.subscribers.add(req.notify);
        const send = req.send;
        const asksToSend =
          send !== undefined && req.claimant === this.input.owner && typeof send.token === 'string' && !!send.token;
        // The owner asks to send the first dispatch itself: its request is on record at once, before any wait, so
        // the flow sees it when it decides who sends.
        const attempt = asksToSend && Number.isInteger(send.attempt) && send.attempt! > 0 ? send.attempt! : 1;
        if (asksToSend) {
          this.ownerToken = send.token;
          this.sendAttempts.set(send.token, Math.max(this.sendAttempts.get(send.token) ?? 0, attempt));
          if (!this.withdrawn.has(send.token)) this.sendRequest ??= send.token;
        }
        if (this.answersWaitForLedger) await condition(() => this.ledgerChecked || isFinal(this.snap.status));
        if (this.refusal) throw this.refusal.toFailure();
        if (!asksToSend) {
          if (this.currentAnswers) await afterThisActivation();
          return this.snapshot();
        }
        // It is answered once the flow has decided who sends (policy loaded, `dispatching` on record) or has gone
        // elsewhere (confirmation, review, refusal), and never while a report waits to be applied: the answer then
        // shows what the report made of the action.
        await condition(
          () =>
            (this.firstDispatchDecided && !this.grant?.report) ||
            (this.snap.status !== 'planned' && this.snap.status !== 'dispatching'),
        );
        // Only the newest attempt of the granted activity sends: an older one whose claim was held up has
        // timed out, and must not send beside it.
        const grant = this.grant;
        if (!grant || grant.token !== send.token || grant.report || attempt !== this.sendAttempts.get(send.token)) {
          return this.snapshot();
        }
        // No earlier answer said "send": no earlier attempt can have sent, whatever the attempt number.
        const firstGrant = grant.answers === 0;
        grant.answers++;
        return { ...this.snapshot(), sendGranted: true, firstGrant };
      },
      {
        validator: (req) => {
          if (req.requestHash !== requestHash) {
            throw new RetrysafeError(
              'IntentMismatch',
              `action ${key} was claimed with request hash ${requestHash.slice(0, 12)}…; ` +
                `this claim carries ${String(req.requestHash).slice(0, 12)}…. A changed request needs a new action key.`,
              { key, expected: requestHash, got: req.requestHash },
            ).toFailure();
          }
        },
      },
    );
    setHandler(watchUpdate, async ({ watcher }) => {
      this.subscribers.add(watcher);
      if (this.currentAnswers) await afterThisActivation();
      // A report waiting to be applied is applied first, so the watcher sees what it made of the action.
      await condition(() => !this.grant?.report);
      return this.snapshot();
    });
    setHandler(outcomeUpdate, async () => {
      await condition(() => OUTCOME_STATUSES.includes(this.snap.status));
      return this.snapshot();
    });
    setHandler(providerEventSignal, (event) => {
      // Evidence only: kept once per event ID (a storm of duplicates is one event), never acted on here.
      if (event.key && event.key !== key) return;
      if (typeof event.eventId !== 'string' || !event.eventId) return;
      if (event.outcome !== 'succeeded' && event.outcome !== 'failed') return;
      if (this.evidence.some((e) => e.eventId === event.eventId)) return;
      if (this.evidence.length >= MAX_EVENTS) {
        log.warn('provider event dropped: too many distinct events', { key, eventId: event.eventId });
        return;
      }
      this.evidence.push({ ...event, receivedAt: event.receivedAt ?? nowIso() });
    });
    setHandler(
      resolveUpdate,
      async (signed) => {
        this.decisions.taken(signed.claims);
        const entry: Resolution = { resolution: this.resolutionOf(signed) };
        this.resolutions.push(entry);
        await condition(() => entry.answer !== undefined);
        if (entry.answer === 'superseded') {
          throw new RetrysafeError(
            'IllegalTransition',
            `action ${key} settled (${this.snap.status}) before this decision could be applied`,
            {
              status: this.snap.status,
            },
          ).toFailure();
        }
        return this.snapshot();
      },
      { validator: (signed) => this.checkResolution(this.resolutionOf(signed, true)) },
    );
    setHandler(
      approveUpdate,
      async (signed) => {
        this.decisions.taken(signed.claims);
        if (!this.approval) this.approval = { claims: signed.claims, publicKeyId: signed.publicKeyId };
        // A second (double-clicked) approval is answered with the first decision's outcome; it never acts twice.
        await condition(() => this.snap.status !== 'awaiting_confirmation');
        return {
          key,
          decision: this.approval.claims.decision as 'approve' | 'reject',
          approver: this.approval.claims.operator,
          status: this.snap.status,
        };
      },
      {
        validator: (signed) => {
          if (this.snap.status !== 'awaiting_confirmation' && !this.approval) {
            throw new RetrysafeError(
              'DecisionRejected',
              `action ${key} is ${this.snap.status}, not awaiting confirmation`,
              {
                reason: 'not-awaiting-confirmation',
              },
            ).toFailure();
          }
          this.verify(signed, ['approve', 'reject']);
        },
      },
    );
    setHandler(dispatchReportSignal, (signal) => this.takeReport(signal));
    setHandler(settleSignal, (s) => {
      this.settlement = s;
    });
  }

  /**
   * An owner's dispatch report (input from outside: rebuilt by parseDispatchReport). Only the open grant's
   * token counts, once. A no-verdict report before any grant withdraws the owner's request, so the action
   * sends itself. Any other report is kept in the audit (and, when it is the owner's own, as an untrusted
   * check with what it says), and changes nothing.
   */
  private takeReport(signal: unknown): void {
    const { key } = this.input;
    const parsed = parseDispatchReport(signal);
    const ignore = (why: string) => {
      log.warn('dispatch report ignored', { key, why });
      this.note(`dispatch report ignored: ${why}`);
    };
    if ('problem' in parsed) return ignore(parsed.problem);
    const { token, report } = parsed;
    const owners = this.sendAttempts.has(token);
    if (!owners) return ignore('it carries a token no claim of the owner carried');
    const grant = this.grant;
    if (!grant && !this.firstDispatchDecided && report.kind === 'no-verdict' && token === this.sendRequest) {
      this.withdrawn.add(token);
      this.sendRequest = undefined;
      this.note(`the owner gave up before it was granted the send (${report.message}); the action sends itself`);
      return;
    }
    if (grant?.token === token && !grant.report) {
      grant.report = report;
      return;
    }
    const why = grant
      ? grant.token === token
        ? 'the dispatch was reported already'
        : 'it carries another token than the grant'
      : 'no dispatch is granted to the owner now';
    ignore(why);
    const move = reportedMove(report);
    this.snap.checks.push({
      at: nowIso(),
      kind: 'evidence',
      found: move.to === 'confirmed',
      trustworthy: false,
      detail: `a report of the owner's that was not applied (${why}) says ${move.to}: ${move.reason}`,
    });
  }

  /** Refuses every claim, present and future, with `refusal` (nothing was or will be sent under this workflow). */
  refuse(refusal: RetrysafeError): void {
    this.refusal = refusal;
  }

  /**
   * Restores the outcome an earlier workflow of this key settled, as the worker's ledger holds it: not a move of
   * the status machine (nothing happens now), the record of what happened, with its audit trail.
   */
  adoptSettled(recorded: ActionSnapshot): void {
    const s = this.snap;
    s.status = recorded.status;
    // The row's owner acted on it (a run's act, or an earlier workflow's owner): it decides on any undo, not this claimant.
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

  /** The owner to leave out when a report's move is announced: it knows, if it holds the report's token. */
  quietForReport(token: string): string | undefined {
    return this.ownerToken === token ? this.input.owner : undefined;
  }

  private verify(signed: unknown, decisions: readonly Decision[]): DecisionClaims {
    const { key, requestHash, tenant } = this.input;
    return this.decisions.verify(signed, { decisions, key, tenant, requestHash });
  }

  /** The resolution a signed `resolve` decision carries; in a validator it is verified first. */
  private resolutionOf(signed: SignedDecision, verify = false): OperatorResolution {
    const claims = verify ? this.verify(signed, ['resolve']) : signed.claims;
    const params = paramsOf(claims, 'resolve');
    return {
      decision: params.outcome,
      operator: claims.operator,
      reason: params.reason,
      ...(params.providerRef ? { providerRef: params.providerRef } : {}),
    };
  }

  private checkResolution(resolution: OperatorResolution): void {
    const { key } = this.input;
    if (!resolution.operator || !resolution.reason) {
      throw new RetrysafeError('InvalidIntent', 'a resolution needs operator and reason', {
        field: resolution.operator ? 'reason' : 'operator',
      }).toFailure();
    }
    if (resolution.decision === 'confirmed' && !resolution.providerRef) {
      throw new RetrysafeError('InvalidIntent', 'confirming by hand needs the providerRef seen at the provider', {
        field: 'providerRef',
      }).toFailure();
    }
    if (
      this.snap.decisionMode === 'human-only' &&
      (resolution.decision === 'not-happened' || resolution.decision === 'compensate')
    ) {
      throw new RetrysafeError(
        'IllegalTransition',
        `action ${key} is human-only: the agent never performs it; record what a person did (confirmed with providerRef) or failed`,
        { field: 'decision' },
      ).toFailure();
    }
    if (this.snap.status !== 'needs_review') {
      throw new RetrysafeError(
        'IllegalTransition',
        `action ${key} is ${this.snap.status}; only an action in needs_review takes an operator's decision`,
        {
          status: this.snap.status,
        },
      ).toFailure();
    }
  }

  /** The first event not yet weighed: one that claims success, or (anyOutcome) any event at all. */
  unweighedEvent(anyOutcome: boolean): ProviderEvent | undefined {
    return this.evidence.find(
      (e) => !this.weighed.has(e.eventId) && (anyOutcome || (e.outcome === 'succeeded' && !!e.providerRef)),
    );
  }

  /** Every event not yet weighed that claims success. */
  unweighedSuccesses(): ProviderEvent[] {
    return this.evidence.filter((e) => !this.weighed.has(e.eventId) && e.outcome === 'succeeded' && e.providerRef);
  }

  /**
   * Records what an event was found to be worth, once: an evidence check (trustworthy only when a lookup
   * agreed) and, when something contradicted it, a conflict for a person.
   */
  weigh(event: ProviderEvent, verdict: { trustworthy: boolean; detail: string; refutedBy?: string }): void {
    if (this.weighed.has(event.eventId)) return;
    this.weighed.add(event.eventId);
    if (verdict.refutedBy) this.refuted.set(event.eventId, verdict.refutedBy);
    this.snap.checks.push({
      at: nowIso(),
      kind: 'evidence',
      found: event.outcome === 'succeeded',
      trustworthy: verdict.trustworthy,
      detail: `${describeEvent(event)}: ${verdict.detail}`,
    });
  }

  /**
   * Events that disagree with the action's outcome or with each other, derived from what the action holds
   * now, so a late contradicting event shows up without changing anything else.
   */
  conflicts(): EventConflict[] {
    const s = this.snap;
    const happened = s.status === 'confirmed' || s.status === 'compensating' || s.status === 'compensated';
    const outcomes = new Set(this.evidence.map((e) => e.outcome));
    const reasonFor = (e: ProviderEvent): string | undefined => {
      const refuted = this.refuted.get(e.eventId);
      if (refuted) return refuted;
      if (happened && e.outcome === 'failed') {
        return `says it failed, but the action is ${s.status}${s.providerRef ? ` (${s.providerRef})` : ''}`;
      }
      if (happened && e.providerRef && s.providerRef && e.providerRef !== s.providerRef) {
        return `names ${e.providerRef}, but the action holds ${s.providerRef}`;
      }
      if (s.status === 'failed' && e.outcome === 'succeeded') return 'says it succeeded, but the action failed';
      if (!happened && s.status !== 'failed' && outcomes.size > 1) {
        return 'events for this action disagree (succeeded and failed)';
      }
      return undefined;
    };
    return this.evidence.flatMap((e) => {
      const reason = reasonFor(e);
      if (!reason) return [];
      return [
        {
          at: e.receivedAt ?? '',
          eventId: e.eventId,
          type: e.type,
          outcome: e.outcome,
          ...(e.providerRef ? { providerRef: e.providerRef } : {}),
          reason,
        },
      ];
    });
  }

  pendingResolution(): Resolution | undefined {
    return this.resolutions.find((r) => r.answer === undefined);
  }

  /** The one way status changes: checked by the status machine, audited, published, told to claimants. */
  /**
   * Writes one status change to the durable ledger (set when the worker keeps one); awaited by `move`, so a
   * status is on record there before the action acts on it. The sequence number is the audit index.
   */
  recordStatus: ((seq: number, entry: AuditEntry) => Promise<void>) | undefined;

  async move(to: ActionStatus, reason: string, by?: string, quietFor?: string): Promise<void> {
    const from = this.snap.status;
    this.snap.status = transition(from, to);
    const entry: AuditEntry = { at: nowIso(), from, to, reason, ...(by ? { by } : {}) };
    this.snap.audit.push(entry);
    if (this.recordStatus) await this.recordStatus(this.snap.audit.length - 1, entry);
    log.info('action status', { key: this.input.key, from, to, reason });
    this.publish();
    // Claimants learn of each change by signal, in the background: the action's state lives in this
    // history, so the next step need not wait a workflow task for the delivery (finish awaits them).
    // `quietFor` is a claimant that knows this change already (the owner whose report it applies).
    const sent: Promise<void> = this.notifySubscribers(quietFor).finally(() => this.notifications.delete(sent));
    this.notifications.add(sent);
  }

  note(reason: string, by?: string): void {
    this.snap.audit.push({ at: nowIso(), from: this.snap.status, to: this.snap.status, reason, ...(by ? { by } : {}) });
  }

  publish(): void {
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

  memo(fields: Record<string, unknown>): void {
    upsertMemo(fields);
  }

  private async notifySubscribers(quietFor?: string): Promise<void> {
    const snap = this.snapshot();
    await Promise.all(
      [...this.subscribers]
        .filter((id) => id !== quietFor)
        .map(async (id) => {
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

  /** Answers decisions that were overtaken, delivers the last notifications, and lets handlers finish. */
  async finish(): Promise<ActionSnapshot> {
    for (const entry of this.resolutions) entry.answer ??= 'superseded';
    await Promise.all(this.notifications);
    await condition(allHandlersFinished);
    return this.snapshot();
  }
}

/** Distinct provider events one action keeps; a flood beyond it is dropped (and logged), not kept forever. */
const MAX_EVENTS = 1_000;

function describeEvent(e: ProviderEvent): string {
  return `${e.type} ${e.eventId}${e.providerRef ? ` (${e.providerRef})` : ''}${e.provider ? ` from ${e.provider}` : ''}`;
}

/**
 * Resolves once every job of the current activation has been applied. A handler runs while its job is processed,
 * before a result that arrived in the same workflow task (an activity's outcome) reaches the code awaiting it;
 * conditions are evaluated after each job and again once the activation's microtasks have run, and the microtask
 * queued here runs only then, so the answer that follows sees what the whole task brought.
 */
function afterThisActivation(): Promise<void> {
  let drained = false;
  void Promise.resolve().then(() => {
    drained = true;
  });
  return condition(() => drained);
}

export function nowIso(): string {
  return new Date(Date.now()).toISOString();
}
