/**
 * One action, one workflow: the workflow ID is the action key, so Temporal's ID uniqueness is the
 * dedupe record and this history is the action's audit log.
 *
 *   planned ──limits──▶ dispatching ──executor──▶ confirmed ─┬─▶ (compensatable) wait for the run: kept | compensated
 *                            │                                 └─▶ done
 *                            ├─▶ failed (declined, invalid, provider down with nothing committed)
 *                            └─▶ unknown ──reconcile: evidence, lookups after the lag──▶ confirmed
 *                                   │                      provably absent ─▶ dispatching (same key)
 *                                   └─▶ needs_review ──operator / late evidence──▶ confirmed | failed | dispatching
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { RetrysafeError, errorCodeOf } from '../policies/errors';
import { transition, type EffectStatus } from '../policies/effect-status';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { checkContractLimits, contractFor, redactedPreview, summarizeIntent } from '../policies/tool-contracts';
import {
  COMPENSATION_WINDOW,
  DISPATCH_HEARTBEAT_TIMEOUT,
  DISPATCH_RETRY,
  DISPATCH_SCHEDULE_TO_CLOSE,
  DISPATCH_START_TO_CLOSE,
  ESCALATION_WINDOW,
  READ_START_TO_CLOSE,
  RECONCILE_INTERVAL,
  RECONCILE_MAX_CHECKS,
  MAX_REDISPATCHES,
} from '../policies/timeouts';
import {
  actionUpdateSignal,
  claimUpdate,
  providerEventSignal,
  resolveUpdate,
  settleSignal,
  statusQuery,
  type EffectInput,
  type EffectSnapshot,
  type OperatorResolution,
  type ProviderEvent,
  type Settlement,
} from './effect-api';

type Activities = ReturnType<typeof createActivities>;

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
  const resolutions: OperatorResolution[] = [];
  let settlement: Settlement | undefined;
  let lastDispatchEndedMs = 0;

  const snapshot = (): EffectSnapshot => ({ ...state, claimants: [...state.claimants], checks: [...state.checks], audit: [...state.audit] });

  setHandler(statusQuery, snapshot);
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
  setHandler(providerEventSignal, (event) => {
    if (event.key && event.key !== input.key) return;
    if (!evidence.some((e) => e.eventId === event.eventId)) evidence.push(event);
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      resolutions.push(resolution);
      await condition(() => !resolutions.includes(resolution));
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
        if (!['needs_review', 'unknown'].includes(state.status) && !(resolution.decision === 'compensate' && state.status === 'confirmed')) {
          throw new RetrysafeError('IllegalTransition', `action ${input.key} is ${state.status}; only unknown or needs_review actions take a resolution`, {
            status: state.status,
          }).toFailure();
        }
      },
    },
  );
  setHandler(settleSignal, (s) => {
    settlement = s;
  });

  upsertMemo({ intentPreview: redactedPreview(input.intent), requestHash: input.requestHash, summary });
  publish();

  // ── act ──
  try {
    checkContractLimits(input.intent);
  } catch (err) {
    await move('needs_review', (err as Error).message);
    await awaitReview();
    return finish();
  }

  let mode: 'first' | 'maybe-sent' = 'first';
  for (;;) {
    await move('dispatching', mode === 'first' ? 'dispatch' : 'redispatch with the same key');
    const result = await dispatch(mode);
    if (result === 'confirmed' || result === 'failed') break;
    // unknown: reconcile by evidence and lookups; resend only when absence is proven and the contract allows it.
    const verdict = await reconcile();
    if (verdict === 'confirmed') break;
    if (verdict === 'absent' && contract.dedupe !== 'none' && state.dispatches < MAX_REDISPATCHES) {
      mode = 'maybe-sent';
      continue;
    }
    await move('needs_review', verdict === 'absent' ? 'provably absent, but the redispatch budget is spent' : 'reconciliation could not establish the outcome');
    const next = await awaitReview();
    if (next !== 'dispatch') break;
    mode = 'maybe-sent';
  }

  if (state.status === 'confirmed' && contract.compensation) {
    // Keep the action open so its run can record what became of it; the Web UI then shows "compensated".
    await condition(() => settlement !== undefined && settlement.state !== 'compensating', COMPENSATION_WINDOW);
    if (settlement?.state === 'compensated') await move('compensating', `compensation ${settlement.compensationKey ?? ''} claimed`, settlement.by);
    if (settlement?.state === 'compensated') await move('compensated', `compensation ${settlement.compensationKey ?? ''} confirmed`, settlement.by);
    if (settlement?.state === 'compensation-failed') await move('needs_review', `compensation ${settlement.compensationKey ?? ''} failed`, settlement.by);
  }
  return finish();

  // ── helpers ──

  async function dispatch(dispatchMode: 'first' | 'maybe-sent'): Promise<'confirmed' | 'failed' | 'unknown'> {
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
      const code = errorCodeOf(err) ?? 'OutcomeUnknown';
      const message = causeMessage(err);
      if (err instanceof ActivityFailure && !(err.cause instanceof ApplicationFailure)) {
        // Timed out or retries exhausted without a verdict from the executor: the provider may have committed.
        await move('unknown', `dispatch ended without an outcome: ${message}`);
        return 'unknown';
      }
      state.error = { code, message };
      await move('failed', `${code}: ${message}`);
      return 'failed';
    }
  }

  async function reconcile(): Promise<'confirmed' | 'absent' | 'unresolved'> {
    for (let check = 0; check < RECONCILE_MAX_CHECKS; check++) {
      const proof = evidence.find((e) => e.outcome === 'succeeded' && e.providerRef);
      if (proof) {
        state.checks.push({ at: nowIso(), kind: 'evidence', found: true, trustworthy: true, detail: `${proof.type} ${proof.eventId}` });
        state.providerRef = proof.providerRef;
        await move('confirmed', `provider event ${proof.type} (${proof.eventId})`);
        return 'confirmed';
      }
      if (contract.dedupe === 'none' && !contract.lookupReference) {
        // Nothing to ask: wait a little for a webhook, then hand over to a human.
        await condition(() => evidence.length > 0, RECONCILE_INTERVAL);
        if (evidence.length === 0 && check >= 1) return 'unresolved';
        continue;
      }
      const lagLeft = lastDispatchEndedMs + contract.readAfterWriteLagMs - Date.now();
      if (lagLeft > 0) {
        // An empty lookup now would prove nothing: wait out the read-after-write lag on a durable timer.
        await condition(() => evidence.length > 0, lagLeft);
        continue;
      }
      const found = await lookupEffect({ key: input.key, intent: input.intent });
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

  /** Waits for an operator (or late evidence) and applies the decision. Returns 'dispatch' to resend with the key. */
  async function awaitReview(): Promise<'done' | 'dispatch'> {
    const decided = await condition(
      () => resolutions.length > 0 || evidence.some((e) => e.outcome === 'succeeded' && e.providerRef),
      ESCALATION_WINDOW,
    );
    if (!decided) {
      log.warn('action escalated: unresolved past the escalation window', { key: input.key });
      state.audit.push({ at: nowIso(), from: state.status, to: state.status, reason: 'escalated: unresolved past the escalation window' });
      await condition(() => resolutions.length > 0 || evidence.some((e) => e.outcome === 'succeeded' && e.providerRef));
    }
    const lateProof = evidence.find((e) => e.outcome === 'succeeded' && e.providerRef);
    if (resolutions.length === 0 && lateProof) {
      state.providerRef = lateProof.providerRef;
      await move('confirmed', `late provider event ${lateProof.type} (${lateProof.eventId})`);
      return 'done';
    }
    const resolution = resolutions[0];
    try {
      switch (resolution.decision) {
        case 'confirmed':
          state.providerRef = resolution.providerRef;
          await move('confirmed', `operator: ${resolution.reason}`, resolution.operator);
          return 'done';
        case 'failed':
          await move('failed', `operator: ${resolution.reason}`, resolution.operator);
          return 'done';
        case 'compensate':
          await move('compensating', `operator: ${resolution.reason}`, resolution.operator);
          return 'done';
        case 'not-happened':
          state.audit.push({ at: nowIso(), from: state.status, to: state.status, reason: `operator says not happened: ${resolution.reason}`, by: resolution.operator });
          return 'dispatch';
      }
    } finally {
      resolutions.shift();
    }
  }

  async function move(to: EffectStatus, reason: string, by?: string): Promise<void> {
    const from = state.status;
    state.status = transition(from, to);
    state.audit.push({ at: nowIso(), from, to, reason, ...(by ? { by } : {}) });
    log.info('action status', { key: input.key, from, to, reason });
    publish();
    await notifySubscribers();
  }

  function publish(): void {
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


