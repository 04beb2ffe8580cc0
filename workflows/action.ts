/**
 * One action, one workflow: the workflow ID is the action key, so Temporal's ID uniqueness is the
 * dedupe record and this history is the action's audit log. The state and its messages live in
 * ActionState (action-state.ts); this function is the lifecycle.
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
  condition,
  log,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { ActionPolicy } from '../activities/load-action-policy';
import { decide, type PolicyDecision } from '../policies/decision-table';
import { buildDryRun } from '../policies/dry-run';
import { errorCodeOf } from '../policies/errors';
import type { TenantPolicy } from '../policies/tenant-policy';
import { amountOf, checkToolLimits, currencyOf } from '../policies/tool-facts';
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
import type { ActionInput, ActionSnapshot, Settlement } from '../messages/action';
import { ActionState, nowIso } from './action-state';

type Activities = ReturnType<typeof createActivities>;
type DispatchMode = 'first' | 'maybe-sent' | 'operator-cleared';

export async function actionWorkflow(input: ActionInput): Promise<ActionSnapshot> {
  const state = new ActionState(input);
  state.install();
  const { loadActionPolicy, loadVolatilePolicy } = proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    summary: `policy for ${input.tenant}`,
  });

  // ── check: the worker's registry and policy decide whether a person must confirm this exact request ──
  let policy: ActionPolicy;
  try {
    policy = await loadActionPolicy({
      tenant: input.tenant,
      key: input.key,
      intent: input.intent,
      requestHash: input.requestHash,
    });
  } catch (err) {
    // An intent this worker cannot vouch for (unknown tool, forged hash, a key of another tool) is never sent.
    const code = errorCodeOf(err) ?? 'InvalidIntent';
    state.snap.error = { code, message: causeMessage(err) };
    await state.move('failed', `refused before sending: ${causeMessage(err)}`);
    return state.finish();
  }
  const { tool } = policy;
  state.trustedKeys = policy.trustedApprovalKeys;
  state.snap.summary = policy.summary;
  state.memo({ intentPreview: policy.preview, requestHash: input.requestHash, summary: policy.summary });
  state.publish();

  const { executeAction } = proxyActivities<Activities>({
    startToCloseTimeout: DISPATCH_START_TO_CLOSE,
    scheduleToCloseTimeout: DISPATCH_SCHEDULE_TO_CLOSE,
    heartbeatTimeout: DISPATCH_HEARTBEAT_TIMEOUT,
    retry: DISPATCH_RETRY,
    summary: `${tool.name}: ${policy.summary}`,
  });
  const { lookupAction } = proxyActivities<Activities>({
    startToCloseTimeout: READ_START_TO_CLOSE,
    retry: { maximumAttempts: 3 },
    summary: `look up ${input.key}`,
  });
  let lastDispatchEndedMs = 0;

  const decision = policyDecision(policy.tenantPolicy);
  state.snap.decisionMode = decision.mode;
  if (decision.mode === 'human-only') {
    // Above the limits one approval click is not enough scrutiny: the agent never performs this action.
    // A person does it (or decides it must not happen) and records the outcome here.
    showDryRun(decision);
    await state.move('needs_review', `human-only: ${decision.reasons.join('; ') || decision.rows.join(', ')}`);
    await awaitReview();
    return state.finish();
  }
  if (decision.mode === 'confirm' && !(await awaitConfirmation(decision))) return state.finish();

  // ── act ──
  let mode: DispatchMode = 'first';
  for (;;) {
    await state.move(
      'dispatching',
      mode === 'first'
        ? 'dispatch'
        : mode === 'operator-cleared'
          ? 'dispatch after an operator cleared it'
          : 'redispatch with the same key',
    );
    const result = await dispatch(mode);
    if (result === 'confirmed' || result === 'failed') break;
    // unknown: reconcile by evidence and lookups; resend only when absence is proven and the contract allows it.
    const verdict = await reconcile();
    if (verdict === 'confirmed') break;
    if (verdict === 'absent' && tool.dedupe !== 'none' && state.snap.dispatches <= MAX_REDISPATCHES) {
      mode = 'maybe-sent';
      continue;
    }
    await state.move(
      'needs_review',
      verdict === 'absent'
        ? 'provably absent, but the redispatch budget is spent'
        : 'reconciliation could not establish the outcome',
    );
    if ((await awaitReview()) !== 'dispatch') break;
    mode = 'operator-cleared';
  }

  if (tool.compensationTool && (state.status === 'confirmed' || state.status === 'compensating'))
    await awaitSettlement();
  return state.finish();

  // ── helpers ──

  function policyDecision(tenantPolicy: TenantPolicy | undefined): PolicyDecision {
    const base = decide(tool, input.intent, { tenantPolicy });
    try {
      checkToolLimits(tool, input.intent);
      return base;
    } catch (err) {
      // Above a per-action limit, only a person may let the action proceed.
      return { ...base, mode: 'human-only', reasons: [...base.reasons, (err as Error).message] };
    }
  }

  function showDryRun(d: PolicyDecision): void {
    const amountCents = amountOf(tool, input.intent);
    const currency = currencyOf(tool, input.intent);
    const facts = {
      operation: tool.name,
      summary: policy.summary,
      preview: policy.preview,
      ...policy.dryRun,
      ...(amountCents !== undefined ? { amountCents } : {}),
      ...(currency ? { currency } : {}),
    };
    state.snap.dryRun = buildDryRun(input.key, facts, input.requestHash, d, nowIso());
    state.memo({
      dryRun: {
        summary: state.snap.dryRun.summary,
        target: state.snap.dryRun.target,
        scope: state.snap.dryRun.scope,
        mode: d.mode,
      },
    });
  }

  /** Dry run, then wait for a verified, signed decision bound to this key and request hash. */
  async function awaitConfirmation(d: PolicyDecision): Promise<boolean> {
    showDryRun(d);
    await state.move('awaiting_confirmation', `${d.mode}: ${d.reasons.join('; ') || d.rows.join(', ')}`);
    const decided = await condition(() => state.approval !== undefined, CONFIRMATION_WINDOW);
    if (!decided || !state.approval) {
      await fail(
        'ApprovalRejected',
        'no verified confirmation arrived within the confirmation window; nothing was sent',
      );
      return false;
    }
    const { claims, publicKeyId } = state.approval;
    if (claims.decision === 'reject') {
      await fail('ApprovalRejected', `rejected by ${claims.approver}; nothing was sent`, claims.approver);
      return false;
    }
    // Re-read the volatile facts before acting: the approver's key may have been revoked, the tenant's limits changed.
    const fresh = await loadVolatilePolicy({ tenant: input.tenant });
    if (!fresh.trustedApprovalKeys[publicKeyId]) {
      await fail(
        'ApprovalRejected',
        `approval key ${publicKeyId} is no longer trusted; nothing was sent`,
        claims.approver,
      );
      return false;
    }
    if (Date.parse(claims.expiresAt) <= Date.now()) {
      await fail(
        'ApprovalRejected',
        `the approval by ${claims.approver} expired before the action could start; nothing was sent`,
        claims.approver,
      );
      return false;
    }
    const recheck = policyDecision(fresh.tenantPolicy);
    if (recheck.mode === 'human-only' && d.mode !== 'human-only') {
      await state.move(
        'needs_review',
        `policy changed since the approval: now ${recheck.mode} (${recheck.reasons.join('; ')})`,
        claims.approver,
      );
      if ((await awaitReview()) !== 'dispatch') return false;
    }
    state.snap.approvedBy = claims.approver;
    state.note(`approved (key ${publicKeyId}, expires ${claims.expiresAt})`, claims.approver);
    return true;
  }

  async function fail(code: string, message: string, by?: string): Promise<void> {
    state.snap.error = { code, message };
    await state.move('failed', message, by);
  }

  async function dispatch(dispatchMode: DispatchMode): Promise<'confirmed' | 'failed' | 'unknown'> {
    state.snap.dispatches++;
    try {
      const outcome = await executeAction({
        key: input.key,
        intent: input.intent,
        requestHash: input.requestHash,
        mode: dispatchMode,
      });
      state.snap.sends += outcome.sends;
      lastDispatchEndedMs = Date.now();
      if (outcome.status === 'confirmed') {
        state.snap.providerRef = outcome.providerRef;
        state.snap.record = outcome.record;
        await state.move('confirmed', `provider ${outcome.via}: ${outcome.providerRef}`);
        return 'confirmed';
      }
      await state.move('unknown', outcome.reason);
      return 'unknown';
    } catch (err) {
      lastDispatchEndedMs = Date.now();
      const message = causeMessage(err);
      if (err instanceof ActivityFailure && !(err.cause instanceof ApplicationFailure)) {
        // Timed out or retries exhausted without a verdict from the executor: the provider may have committed.
        await state.move('unknown', `dispatch ended without an outcome: ${message}`);
        return 'unknown';
      }
      const code = errorCodeOf(err) ?? 'OutcomeUnknown';
      if (input.compensation) {
        // A failed undo is not the end of the story: a person decides what to do, nothing retries by itself.
        state.snap.error = { code, message };
        await state.move('needs_review', `compensation failed permanently: ${code}: ${message}`);
        if ((await awaitReview()) !== 'dispatch') return state.status === 'confirmed' ? 'confirmed' : 'failed';
        await state.move('dispatching', 'dispatch after an operator cleared it');
        return dispatch('operator-cleared');
      }
      await fail(code, `${code}: ${message}`);
      return 'failed';
    }
  }

  async function reconcile(): Promise<'confirmed' | 'absent' | 'unresolved'> {
    const proofArrived = () => state.successEvidence() !== undefined;
    for (let check = 0; check < RECONCILE_MAX_CHECKS; check++) {
      const proof = state.successEvidence();
      if (proof) {
        state.snap.checks.push({
          at: nowIso(),
          kind: 'evidence',
          found: true,
          trustworthy: true,
          detail: `${proof.type} ${proof.eventId}`,
        });
        state.snap.providerRef = proof.providerRef;
        await state.move('confirmed', `provider event ${proof.type} (${proof.eventId})`);
        return 'confirmed';
      }
      if (!tool.hasLookup) {
        // Nothing to ask: wait a little for a webhook, then hand over to a human.
        if (check >= 2) return 'unresolved';
        await condition(proofArrived, RECONCILE_INTERVAL);
        continue;
      }
      const lagLeft = lastDispatchEndedMs + tool.readAfterWriteLagMs - Date.now();
      if (lagLeft > 0) {
        // An empty lookup now would prove nothing: wait out the read-after-write lag on a durable timer.
        await condition(proofArrived, lagLeft);
        continue;
      }
      let found: Awaited<ReturnType<typeof lookupAction>>;
      try {
        found = await lookupAction({ key: input.key, intent: input.intent, requestHash: input.requestHash });
      } catch (err) {
        // The provider could not be asked: that proves nothing either way. Ask again later, then a human.
        state.snap.checks.push({
          at: nowIso(),
          kind: 'lookup',
          found: false,
          trustworthy: false,
          detail: causeMessage(err),
        });
        await condition(proofArrived, RECONCILE_INTERVAL);
        continue;
      }
      state.snap.checks.push({
        at: nowIso(),
        kind: 'lookup',
        found: found.found,
        trustworthy: true,
        detail: found.detail,
      });
      if (found.found) {
        state.snap.providerRef = found.providerRef;
        state.snap.record = found.record;
        await state.move('confirmed', `lookup found ${found.providerRef}`);
        return 'confirmed';
      }
      return 'absent';
    }
    return 'unresolved';
  }

  /** Waits for an operator (or late evidence) and applies the decision. Returns 'dispatch' to send again. */
  async function awaitReview(): Promise<'done' | 'dispatch'> {
    const arrived = () => state.pendingResolution() !== undefined || state.successEvidence() !== undefined;
    if (!(await condition(arrived, ESCALATION_WINDOW))) {
      log.warn('action escalated: unresolved past the escalation window', { key: input.key });
      state.note('escalated: unresolved past the escalation window');
      await condition(arrived);
    }
    const entry = state.pendingResolution();
    const lateProof = state.successEvidence();
    if (!entry && lateProof) {
      state.snap.checks.push({
        at: nowIso(),
        kind: 'evidence',
        found: true,
        trustworthy: true,
        detail: `${lateProof.type} ${lateProof.eventId} (late)`,
      });
      state.snap.providerRef = lateProof.providerRef;
      await state.move('confirmed', `late provider event ${lateProof.type} (${lateProof.eventId})`);
      return 'done';
    }
    const { resolution } = entry!;
    entry!.answer = 'applied';
    switch (resolution.decision) {
      case 'confirmed':
        state.snap.providerRef = resolution.providerRef;
        await state.move('confirmed', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'failed':
        await fail('OperatorResolved', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'compensate':
        await state.move('compensating', `operator: ${resolution.reason}`, resolution.operator);
        return 'done';
      case 'not-happened':
        state.note(`operator says it did not happen: ${resolution.reason}`, resolution.operator);
        return 'dispatch';
    }
  }

  /** A confirmed, compensatable action stays open until its run says it was kept or compensated. */
  async function awaitSettlement(): Promise<void> {
    let handled: Settlement | undefined;
    for (;;) {
      const arrived = await condition(
        () => state.settlement !== undefined && state.settlement !== handled,
        COMPENSATION_WINDOW,
      );
      if (!arrived || !state.settlement) return;
      const s: Settlement = state.settlement;
      handled = s;
      if (s.state === 'kept') return;
      if (state.status === 'confirmed')
        await state.move('compensating', `compensation ${s.compensationKey ?? ''} claimed`, s.by);
      if (s.state === 'compensated')
        return state.move('compensated', `compensation ${s.compensationKey ?? ''} confirmed`, s.by);
      if (s.state === 'compensation-failed')
        return state.move('needs_review', `compensation ${s.compensationKey ?? ''} failed; see that action`, s.by);
    }
  }
}

function causeMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
