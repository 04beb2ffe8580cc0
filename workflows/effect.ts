/**
 * One action, one workflow: the workflow ID is the action key, so Temporal's ID uniqueness is the
 * dedupe record and this history is the action's audit log.
 *
 *   planned ──policy──▶ [awaiting_confirmation ──signed approval──▶] dispatching ──executor──▶ confirmed
 *                              │ rejected / expired ─▶ failed              │                      │
 *                                                                          │       (compensatable) wait for the run:
 *                                                                          │        kept | compensating ─▶ compensated
 *                                                                          ├─▶ failed (declined, invalid, provider down, nothing committed)
 *                                                                          └─▶ unknown ──reconcile: evidence, lookups after the lag──▶ confirmed
 *                                                                                 │                  provably absent ─▶ dispatching (same key)
 *                                                                                 └─▶ needs_review ──operator / late evidence──▶ confirmed | failed
 *                                                                                                                        | dispatching | compensating
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  patched,
  setCurrentDetails,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { ApprovalClaims } from '../policies/approval';
import { verifyApproval } from '../policies/approval';
import { decide, type PolicyDecision } from '../policies/decision-table';
import { buildDryRun } from '../policies/dry-run';
import type { TenantPolicy } from '../policies/tenant-policy';
import { RetrysafeError, errorCodeOf } from '../policies/errors';
import { transition, type EffectStatus } from '../policies/effect-status';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { checkContractLimits, contractFor, redactedPreview, summarizeIntent } from '../policies/tool-contracts';
import {
  COMPENSATION_WINDOW,
  CONFIRMATION_WINDOW,
  DISPATCH_HEARTBEAT_TIMEOUT,
  DISPATCH_RETRY,
  DISPATCH_SCHEDULE_TO_CLOSE,
  DISPATCH_START_TO_CLOSE,
  ESCALATION_WINDOW,
  MAX_REDISPATCHES,
  POLICY_START_TO_CLOSE,
  READ_START_TO_CLOSE,
  RECONCILE_INTERVAL,
  RECONCILE_MAX_CHECKS,
} from '../policies/timeouts';
import { approveUpdate, dryRunQuery } from './approval-api';
import {
  actionUpdateSignal,
  claimUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  watchUpdate,
  type EffectInput,
  type EffectSnapshot,
  type OperatorResolution,
  type ProviderEvent,
  type Settlement,
} from './effect-api';

type Activities = ReturnType<typeof createActivities>;
type DispatchMode = 'first' | 'maybe-sent' | 'operator-cleared';

/** Patch IDs of changes to this workflow's commands; each keeps older histories replaying (see test/replay). */
export const PATCH_LOCAL_POLICY = 'action-policy-local-activity';
export const PATCH_BACKGROUND_NOTIFY = 'notify-claimants-in-background';

export async function effectWorkflow(input: EffectInput): Promise<EffectSnapshot> {
  const contract = contractFor(input.intent.operation);
  const summary = summarizeIntent(input.intent);
  const { dispatchEffect } = proxyActivities<Activities>({
    startToCloseTimeout: DISPATCH_START_TO_CLOSE,
    scheduleToCloseTimeout: DISPATCH_SCHEDULE_TO_CLOSE,
    heartbeatTimeout: DISPATCH_HEARTBEAT_TIMEOUT,
    retry: DISPATCH_RETRY,
    summary: `${contract.provider}: ${summary}`,
  });
  const { lookupEffect } = proxyActivities<Activities>({
    startToCloseTimeout: READ_START_TO_CLOSE,
    retry: { maximumAttempts: 3 },
    summary: `look up ${input.key}`,
  });
  // Reading the worker's own policy configuration needs no task queue round trip: a local activity runs it
  // inside the workflow task. Histories from before the change scheduled a regular activity (hence the patch).
  const policyOptions = { startToCloseTimeout: POLICY_START_TO_CLOSE, summary: `policy for ${input.tenant}` };
  const { loadActionPolicy } = patched(PATCH_LOCAL_POLICY)
    ? proxyLocalActivities<Activities>(policyOptions)
    : proxyActivities<Activities>(policyOptions);
  // Claimants learn of each status change by signal. The action's state lives in this history, not in the
  // claimant, so the next step need not wait a workflow task for the signal's delivery; notifications still
  // complete before the workflow does (see finish). Older histories awaited each one (hence the patch).
  const notifyInBackground = patched(PATCH_BACKGROUND_NOTIFY);
  const pendingNotifications = new Set<Promise<void>>();

  const state: EffectSnapshot = {
    key: input.key,
    operation: input.intent.operation,
    tenant: input.tenant,
    status: 'planned',
    requestHash: input.requestHash,
    owner: input.owner,
    claimants: [input.owner],
    summary,
    sends: 0,
    dispatches: 0,
    checks: [],
    audit: [{ at: nowIso(), from: null, to: 'planned', reason: `intent persisted (hash ${input.requestHash.slice(0, 12)})` }],
  };
  const subscribers = new Set<string>();
  const evidence: ProviderEvent[] = [];
  /** Operator decisions in arrival order; each is answered once applied or superseded. */
  const resolutions: Array<{ resolution: OperatorResolution; answer?: 'applied' | 'superseded' }> = [];
  let settlement: Settlement | undefined;
  let lastDispatchEndedMs = 0;
  /** The approvers' public keys, from the worker's configuration (never from the input). */
  const approvers: { trustedKeys?: Record<string, string> } = {};
  let approval: { claims: ApprovalClaims; publicKeyId: string } | undefined;

  const snapshot = (): EffectSnapshot => ({ ...state, claimants: [...state.claimants], checks: [...state.checks], audit: [...state.audit] });

  setHandler(statusQuery, snapshot);
  setHandler(dryRunQuery, () => state.dryRun);
  setHandler(
    claimUpdate,
    (req) => {
      if (!state.claimants.includes(req.claimant)) state.claimants.push(req.claimant);
      if (req.notify) subscribers.add(req.notify);
      return snapshot();
    },
    {
      validator: (req) => {
        if (req.requestHash !== input.requestHash) {
          throw new RetrysafeError(
            'IntentMismatch',
            `action ${input.key} was claimed with request hash ${input.requestHash.slice(0, 12)}…; ` +
              `this claim carries ${String(req.requestHash).slice(0, 12)}…. A changed request needs a new action key.`,
            { key: input.key, expected: input.requestHash, got: req.requestHash },
          ).toFailure();
        }
      },
    },
  );
  setHandler(watchUpdate, ({ watcher }) => {
    subscribers.add(watcher);
    return snapshot();
  });
  setHandler(providerEventSignal, (event) => {
    if (event.key && event.key !== input.key) return;
    if (!evidence.some((e) => e.eventId === event.eventId)) evidence.push(event);
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      const entry: (typeof resolutions)[number] = { resolution };
      resolutions.push(entry);
      await condition(() => entry.answer !== undefined);
      if (entry.answer === 'superseded') {
        throw new RetrysafeError('IllegalTransition', `action ${input.key} settled (${state.status}) before this decision could be applied`, {
          status: state.status,
        }).toFailure();
      }
      return snapshot();
    },
    {
      validator: (resolution) => {
        if (!resolution.operator || !resolution.reason) {
          throw new RetrysafeError('InvalidIntent', 'a resolution needs operator and reason', { field: resolution.operator ? 'reason' : 'operator' }).toFailure();
        }
        if (resolution.decision === 'confirmed' && !resolution.providerRef) {
          throw new RetrysafeError('InvalidIntent', 'confirming by hand needs the providerRef seen at the provider', { field: 'providerRef' }).toFailure();
        }
        if (state.decisionMode === 'human-only' && (resolution.decision === 'not-happened' || resolution.decision === 'compensate')) {
          throw new RetrysafeError(
            'IllegalTransition',
            `action ${input.key} is human-only: the agent never performs it; record what a person did (confirmed with providerRef) or failed`,
            { field: 'decision' },
          ).toFailure();
        }
        if (state.status !== 'needs_review') {
          throw new RetrysafeError('IllegalTransition', `action ${input.key} is ${state.status}; only an action in needs_review takes an operator's decision`, {
            status: state.status,
          }).toFailure();
        }
      },
    },
  );
  setHandler(
    approveUpdate,
    async (signed) => {
      if (!approval) approval = { claims: signed.claims, publicKeyId: signed.publicKeyId };
      // A second (double-clicked) approval is answered with the first decision's outcome; it never acts twice.
      await condition(() => state.status !== 'awaiting_confirmation');
      return { key: input.key, decision: approval.claims.decision, approver: approval.claims.approver, status: state.status };
    },
    {
      validator: (signed) => {
        if (!approvers.trustedKeys || (state.status !== 'awaiting_confirmation' && !approval)) {
          throw new RetrysafeError('ApprovalRejected', `action ${input.key} is ${state.status}, not awaiting confirmation`, {
            reason: 'not-awaiting-confirmation',
          }).toFailure();
        }
        try {
          verifyApproval(signed, { key: input.key, requestHash: input.requestHash }, approvers.trustedKeys, Date.now());
        } catch (err) {
          if (err instanceof RetrysafeError) throw err.toFailure();
          throw err;
        }
      },
    },
  );
  setHandler(settleSignal, (s) => {
    settlement = s;
  });

  upsertMemo({ intentPreview: redactedPreview(input.intent), requestHash: input.requestHash, summary });
  publish();

  // ── check: policy and limits decide whether a person must confirm this exact request ──
  const policy = await loadActionPolicy({ tenant: input.tenant });
  approvers.trustedKeys = policy.trustedApprovalKeys;
  const decision = policyDecision(policy.tenantPolicy);
  state.decisionMode = decision.mode;
  if (decision.mode === 'human-only') {
    // Above the limits one approval click is not enough scrutiny: the agent never performs this action.
    // A person does it (or decides it must not happen) and records the outcome here.
    state.dryRun = buildDryRun(input.key, input.intent, input.requestHash, decision, nowIso());
    upsertMemo({ dryRun: { summary: state.dryRun.summary, target: state.dryRun.target, scope: state.dryRun.scope, mode: decision.mode } });
    await move('needs_review', `human-only: ${decision.reasons.join('; ') || decision.rows.join(', ')}`);
    await awaitReview();
    return finish();
  }
  if (decision.mode === 'confirm') {
    const confirmed = await awaitConfirmation(decision);
    if (!confirmed) return finish();
  }

  // ── act ──
  let mode: DispatchMode = 'first';
  for (;;) {
    await move('dispatching', mode === 'first' ? 'dispatch' : mode === 'operator-cleared' ? 'dispatch after an operator cleared it' : 'redispatch with the same key');
    const result = await dispatch(mode);
    if (result === 'confirmed' || result === 'failed') break;
    // unknown: reconcile by evidence and lookups; resend only when absence is proven and the contract allows it.
    const verdict = await reconcile();
    if (verdict === 'confirmed') break;
    if (verdict === 'absent' && contract.dedupe !== 'none' && state.dispatches <= MAX_REDISPATCHES) {
      mode = 'maybe-sent';
      continue;
    }
    await move('needs_review', verdict === 'absent' ? 'provably absent, but the redispatch budget is spent' : 'reconciliation could not establish the outcome');
    const next = await awaitReview();
    if (next !== 'dispatch') break;
    mode = 'operator-cleared';
  }

  if (contract.compensation && (state.status === 'confirmed' || state.status === 'compensating')) await awaitSettlement();
  return finish();

  // ── helpers ──

  function policyDecision(tenantPolicy: TenantPolicy | undefined): PolicyDecision {
    const base = decide(input.intent, { tenantPolicy });
    try {
      checkContractLimits(input.intent);
      return base;
    } catch (err) {
      // Above a per-action limit, only a person may let the action proceed.
      return { ...base, mode: 'human-only', reasons: [...base.reasons, (err as Error).message] };
    }
  }

  /** Dry run, then wait for a verified, signed decision bound to this key and request hash. */
  async function awaitConfirmation(decision: PolicyDecision): Promise<boolean> {
    state.dryRun = buildDryRun(input.key, input.intent, input.requestHash, decision, nowIso());
    upsertMemo({ dryRun: { summary: state.dryRun.summary, target: state.dryRun.target, scope: state.dryRun.scope, mode: decision.mode } });
    await move('awaiting_confirmation', `${decision.mode}: ${decision.reasons.join('; ') || decision.rows.join(', ')}`);
    const decided = await condition(() => approval !== undefined, CONFIRMATION_WINDOW);
    if (!decided || !approval) {
      await fail('ApprovalRejected', 'no verified confirmation arrived within the confirmation window; nothing was sent');
      return false;
    }
    const { claims, publicKeyId } = approval;
    if (claims.decision === 'reject') {
      await fail('ApprovalRejected', `rejected by ${claims.approver}; nothing was sent`, claims.approver);
      return false;
    }
    // Re-read the volatile facts before acting: the approver's key may have been revoked, the tenant's limits changed.
    const fresh = await loadActionPolicy({ tenant: input.tenant });
    if (!fresh.trustedApprovalKeys[publicKeyId]) {
      await fail('ApprovalRejected', `approval key ${publicKeyId} is no longer trusted; nothing was sent`, claims.approver);
      return false;
    }
    if (Date.parse(claims.expiresAt) <= Date.now()) {
      await fail('ApprovalRejected', `the approval by ${claims.approver} expired before the action could start; nothing was sent`, claims.approver);
      return false;
    }
    const recheck = policyDecision(fresh.tenantPolicy);
    if (recheck.mode === 'human-only' && decision.mode !== 'human-only') {
      await move('needs_review', `policy changed since the approval: now ${recheck.mode} (${recheck.reasons.join('; ')})`, claims.approver);
      const next = await awaitReview();
      if (next !== 'dispatch') return false;
    }
    state.approvedBy = claims.approver;
    state.audit.push({ at: nowIso(), from: state.status, to: state.status, reason: `approved (key ${publicKeyId}, expires ${claims.expiresAt})`, by: claims.approver });
    return true;
  }

  async function fail(code: string, message: string, by?: string): Promise<void> {
    state.error = { code, message };
    await move('failed', message, by);
  }

  async function dispatch(dispatchMode: DispatchMode): Promise<'confirmed' | 'failed' | 'unknown'> {
    state.dispatches++;
    try {
      const outcome = await dispatchEffect({ key: input.key, intent: input.intent, requestHash: input.requestHash, mode: dispatchMode });
      state.sends += outcome.sends;
      lastDispatchEndedMs = Date.now();
      if (outcome.status === 'confirmed') {
        state.providerRef = outcome.providerRef;
        state.record = outcome.record;
        await move('confirmed', `provider ${outcome.via}: ${outcome.providerRef}`);
        return 'confirmed';
      }
      await move('unknown', outcome.reason);
      return 'unknown';
    } catch (err) {
      lastDispatchEndedMs = Date.now();
      const message = causeMessage(err);
      if (err instanceof ActivityFailure && !(err.cause instanceof ApplicationFailure)) {
        // Timed out or retries exhausted without a verdict from the executor: the provider may have committed.
        await move('unknown', `dispatch ended without an outcome: ${message}`);
        return 'unknown';
      }
      const code = errorCodeOf(err) ?? 'OutcomeUnknown';
      if (input.compensation) {
        // A failed undo is not the end of the story: a person decides what to do, nothing retries by itself.
        state.error = { code, message };
        await move('needs_review', `compensation failed permanently: ${code}: ${message}`);
        const next = await awaitReview();
        if (next !== 'dispatch') return state.status === 'confirmed' ? 'confirmed' : 'failed';
        await move('dispatching', 'dispatch after an operator cleared it');
        return dispatch('operator-cleared');
      }
      await fail(code, `${code}: ${message}`);
      return 'failed';
    }
  }

  async function reconcile(): Promise<'confirmed' | 'absent' | 'unresolved'> {
    for (let check = 0; check < RECONCILE_MAX_CHECKS; check++) {
      const proof = successEvidence();
      if (proof) {
        state.checks.push({ at: nowIso(), kind: 'evidence', found: true, trustworthy: true, detail: `${proof.type} ${proof.eventId}` });
        state.providerRef = proof.providerRef;
        await move('confirmed', `provider event ${proof.type} (${proof.eventId})`);
        return 'confirmed';
      }
      if (!contract.lookupReference) {
        // Nothing to ask: wait a little for a webhook, then hand over to a human.
        if (check >= 2) return 'unresolved';
        await condition(() => successEvidence() !== undefined, RECONCILE_INTERVAL);
        continue;
      }
      const lagLeft = lastDispatchEndedMs + contract.readAfterWriteLagMs - Date.now();
      if (lagLeft > 0) {
        // An empty lookup now would prove nothing: wait out the read-after-write lag on a durable timer.
        await condition(() => successEvidence() !== undefined, lagLeft);
        continue;
      }
      let found: Awaited<ReturnType<typeof lookupEffect>>;
      try {
        found = await lookupEffect({ key: input.key, intent: input.intent });
      } catch (err) {
        // The provider could not be asked: that proves nothing either way. Ask again later, then a human.
        state.checks.push({ at: nowIso(), kind: 'lookup', found: false, trustworthy: false, detail: causeMessage(err) });
        await condition(() => successEvidence() !== undefined, RECONCILE_INTERVAL);
        continue;
      }
      state.checks.push({ at: nowIso(), kind: 'lookup', found: found.found, trustworthy: true, detail: found.detail });
      if (found.found) {
        state.providerRef = found.providerRef;
        state.record = found.record;
        await move('confirmed', `lookup found ${found.providerRef}`);
        return 'confirmed';
      }
      return 'absent';
    }
    return 'unresolved';
  }

  function successEvidence(): ProviderEvent | undefined {
    return evidence.find((e) => e.outcome === 'succeeded' && e.providerRef);
  }

  /** Waits for an operator (or late evidence) and applies the decision. Returns 'dispatch' to send again. */
  async function awaitReview(): Promise<'done' | 'dispatch'> {
    const pending = () => resolutions.find((r) => r.answer === undefined);
    const decided = await condition(() => pending() !== undefined || successEvidence() !== undefined, ESCALATION_WINDOW);
    if (!decided) {
      log.warn('action escalated: unresolved past the escalation window', { key: input.key });
      state.audit.push({ at: nowIso(), from: state.status, to: state.status, reason: 'escalated: unresolved past the escalation window' });
      await condition(() => pending() !== undefined || successEvidence() !== undefined);
    }
    const entry = pending();
    const lateProof = successEvidence();
    if (!entry && lateProof) {
      state.checks.push({ at: nowIso(), kind: 'evidence', found: true, trustworthy: true, detail: `${lateProof.type} ${lateProof.eventId} (late)` });
      state.providerRef = lateProof.providerRef;
      await move('confirmed', `late provider event ${lateProof.type} (${lateProof.eventId})`);
      return 'done';
    }
    const { resolution } = entry!;
    entry!.answer = 'applied';
    switch (resolution.decision) {
      case 'confirmed':
        state.providerRef = resolution.providerRef;
        await move('confirmed', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'failed':
        await fail('OperatorResolved', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'compensate':
        await move('compensating', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'not-happened':
        state.audit.push({ at: nowIso(), from: state.status, to: state.status, reason: `operator says it did not happen: ${resolution.reason}`, by: resolution.operator });
        return 'dispatch';
    }
  }

  /** A confirmed, compensatable action stays open until its run says it was kept or compensated. */
  async function awaitSettlement(): Promise<void> {
    let handled: Settlement | undefined;
    for (;;) {
      const arrived = await condition(() => settlement !== undefined && settlement !== handled, COMPENSATION_WINDOW);
      if (!arrived || !settlement) return;
      const s: Settlement = settlement;
      handled = s;
      if (s.state === 'kept') return;
      if (state.status === 'confirmed') await move('compensating', `compensation ${s.compensationKey ?? ''} claimed`, s.by);
      if (s.state === 'compensated') return move('compensated', `compensation ${s.compensationKey ?? ''} confirmed`, s.by);
      if (s.state === 'compensation-failed') return move('needs_review', `compensation ${s.compensationKey ?? ''} failed; see that action`, s.by);
    }
  }

  async function move(to: EffectStatus, reason: string, by?: string): Promise<void> {
    const from = state.status;
    state.status = transition(from, to);
    state.audit.push({ at: nowIso(), from, to, reason, ...(by ? { by } : {}) });
    log.info('action status', { key: input.key, from, to, reason });
    publish();
    if (!notifyInBackground) return notifySubscribers();
    const sent: Promise<void> = notifySubscribers().finally(() => pendingNotifications.delete(sent));
    pendingNotifications.add(sent);
  }

  function publish(): void {
    // The Web UI shows this line on the workflow page: what the action is and where it stands, not JSON.
    setCurrentDetails(`**${state.status}** · ${summary}${state.providerRef ? ` · ${state.providerRef}` : ''}${state.error ? ` · ${state.error.code}` : ''}`);
    upsertSearchAttributes([
      { key: SA_KIND, value: 'action' },
      { key: SA_STATUS, value: state.status },
      { key: SA_OPERATION, value: input.intent.operation },
      { key: SA_TENANT, value: input.tenant },
      ...(state.providerRef ? [{ key: SA_PROVIDER_REF, value: state.providerRef }] : []),
    ]);
  }

  async function notifySubscribers(): Promise<void> {
    const snap = snapshot();
    await Promise.all(
      [...subscribers].map(async (id) => {
        try {
          await getExternalWorkflowHandle(id).signal(actionUpdateSignal, snap);
        } catch (err) {
          log.warn('could not notify a claimant', { key: input.key, claimant: id, error: (err as Error).message });
        }
      }),
    );
  }

  async function finish(): Promise<EffectSnapshot> {
    // Decisions that arrived but were overtaken by evidence or another decision are answered, not left hanging.
    for (const entry of resolutions) entry.answer ??= 'superseded';
    await Promise.all(pendingNotifications);
    await condition(allHandlersFinished);
    return snapshot();
  }

  function nowIso(): string {
    return new Date(Date.now()).toISOString();
  }

  function causeMessage(err: unknown): string {
    let e = err as { message?: string; cause?: unknown } | undefined;
    while (e?.cause) e = e.cause as typeof e;
    return e?.message ?? String(err);
  }
}
