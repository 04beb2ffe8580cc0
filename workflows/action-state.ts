/**
 * The state of one action workflow and the messages that change it. The workflow function
 * (action.ts) decides; this object holds what it decides on, checks every message against it, and
 * publishes each status change to the Web UI, the search attributes and the waiting claimants.
 */
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
import type { ApprovalClaims } from '../policies/approval';
import { verifyApproval } from '../policies/approval';
import { transition, type ActionStatus } from '../policies/action-status';
import { RetrysafeError } from '../policies/errors';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import {
  OUTCOME_STATUSES,
  actionUpdateSignal,
  claimUpdate,
  outcomeUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  watchUpdate,
  type ActionInput,
  type ActionSnapshot,
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
  /** Operator decisions in arrival order; each is answered once applied or superseded. */
  private readonly resolutions: Resolution[] = [];
  private readonly notifications = new Set<Promise<void>>();
  settlement: Settlement | undefined;
  /** The approvers' public keys, from the worker's configuration (never from the input). */
  trustedKeys: Record<string, string> | undefined;
  approval: { claims: ApprovalClaims; publicKeyId: string } | undefined;

  constructor(private readonly input: ActionInput) {
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
    return { ...s, claimants: [...s.claimants], checks: [...s.checks], audit: [...s.audit] };
  }

  /** Installs every handler. Validators refuse before anything enters history. */
  install(): void {
    const { key, requestHash } = this.input;
    setHandler(statusQuery, () => this.snapshot());
    setHandler(dryRunQuery, () => this.snap.dryRun);
    setHandler(
      claimUpdate,
      (req) => {
        if (!this.snap.claimants.includes(req.claimant)) this.snap.claimants.push(req.claimant);
        if (req.notify) this.subscribers.add(req.notify);
        return this.snapshot();
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
    setHandler(watchUpdate, ({ watcher }) => {
      this.subscribers.add(watcher);
      return this.snapshot();
    });
    setHandler(outcomeUpdate, async () => {
      await condition(() => OUTCOME_STATUSES.includes(this.snap.status));
      return this.snapshot();
    });
    setHandler(providerEventSignal, (event) => {
      if (event.key && event.key !== key) return;
      if (!this.evidence.some((e) => e.eventId === event.eventId)) this.evidence.push(event);
    });
    setHandler(
      resolveUpdate,
      async (resolution) => {
        const entry: Resolution = { resolution };
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
      { validator: (resolution) => this.checkResolution(resolution) },
    );
    setHandler(
      approveUpdate,
      async (signed) => {
        if (!this.approval) this.approval = { claims: signed.claims, publicKeyId: signed.publicKeyId };
        // A second (double-clicked) approval is answered with the first decision's outcome; it never acts twice.
        await condition(() => this.snap.status !== 'awaiting_confirmation');
        return {
          key,
          decision: this.approval.claims.decision,
          approver: this.approval.claims.approver,
          status: this.snap.status,
        };
      },
      {
        validator: (signed) => {
          if (!this.trustedKeys || (this.snap.status !== 'awaiting_confirmation' && !this.approval)) {
            throw new RetrysafeError(
              'ApprovalRejected',
              `action ${key} is ${this.snap.status}, not awaiting confirmation`,
              {
                reason: 'not-awaiting-confirmation',
              },
            ).toFailure();
          }
          try {
            verifyApproval(signed, { key, requestHash }, this.trustedKeys, Date.now());
          } catch (err) {
            if (err instanceof RetrysafeError) throw err.toFailure();
            throw err;
          }
        },
      },
    );
    setHandler(settleSignal, (s) => {
      this.settlement = s;
    });
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

  /** The first provider event that proves success, if any arrived. */
  successEvidence(): ProviderEvent | undefined {
    return this.evidence.find((e) => e.outcome === 'succeeded' && e.providerRef);
  }

  pendingResolution(): Resolution | undefined {
    return this.resolutions.find((r) => r.answer === undefined);
  }

  /** The one way status changes: checked by the status machine, audited, published, told to claimants. */
  async move(to: ActionStatus, reason: string, by?: string): Promise<void> {
    const from = this.snap.status;
    this.snap.status = transition(from, to);
    this.snap.audit.push({ at: nowIso(), from, to, reason, ...(by ? { by } : {}) });
    log.info('action status', { key: this.input.key, from, to, reason });
    this.publish();
    // Claimants learn of each change by signal, in the background: the action's state lives in this
    // history, so the next step need not wait a workflow task for the delivery (finish awaits them).
    const sent: Promise<void> = this.notifySubscribers().finally(() => this.notifications.delete(sent));
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

  private async notifySubscribers(): Promise<void> {
    const snap = this.snapshot();
    await Promise.all(
      [...this.subscribers].map(async (id) => {
        try {
          await getExternalWorkflowHandle(id).signal(actionUpdateSignal, snap);
        } catch (err) {
          log.warn('could not notify a claimant', { key: this.input.key, claimant: id, error: (err as Error).message });
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

export function nowIso(): string {
  return new Date(Date.now()).toISOString();
}
