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
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { createActivities } from '../activities';
import type { ActionPolicy } from '../activities/load-action-policy';
import { decideAction, type PolicyDecision } from '../policies/decision-table';
import { buildDryRun } from '../policies/dry-run';
import { isFinal } from '../policies/action-status';
import { errorCodeOf, errorDetailsOf, RetrysafeError } from '../policies/errors';
import { requestLogIn } from '../policies/provider-requests';
import type { TenantPolicy } from '../policies/tenant-policy';
import { amountOf, currencyOf } from '../policies/tool-facts';
import {
  COMPENSATION_WINDOW,
  CONFIRMATION_WINDOW,
  DISPATCH_HEARTBEAT_TIMEOUT,
  DISPATCH_RETRY,
  DISPATCH_SCHEDULE_TO_CLOSE,
  DISPATCH_START_TO_CLOSE,
  ESCALATION_WINDOW,
  MAX_REDISPATCHES,
  OWNER_REPORT_WINDOW,
  POLICY_START_TO_CLOSE,
  READ_START_TO_CLOSE,
  RECONCILE_INTERVAL,
  RECONCILE_MAX_CHECKS,
} from '../policies/timeouts';
import type { ActionInput, ActionSnapshot, DispatchReport, ProviderEvent, Settlement } from '../messages/action';
import { ActionState, nowIso } from './action-state';
import { reportedMove, reportedRequests } from '../messages/dispatch-report';
import type { HandedOver } from '../activities/record-ledger';

type Activities = ReturnType<typeof createActivities>;
type DispatchMode = 'first' | 'maybe-sent' | 'operator-cleared';
/**
 * Workflows from this patch on claim the key's row in the worker's ledger before anything else (claimLedgerRow),
 * and answer claims only once that check is done: whoever started them, the ledger's record of the key decides.
 */
export const LEDGER_IN_WORKER_PATCH = 'ledger-in-worker';
/** Workflows from this patch answer a plain claim after the results its workflow task brought are applied. */
export const CURRENT_CLAIM_ANSWERS_PATCH = 'current-claim-answers';
/** How often, at most and at least, the ledger is asked again while a run's act holds the row. */
const BUSY_POLL_MAX_MS = 1_000;
const BUSY_POLL_MIN_MS = 100;
/** Lookups tried for an event that arrives during review before it is left to the person. */
const LATE_EVENT_LOOKUPS = 3;

/**
 * One action's lifecycle, under its key as workflow ID: the ledger check, the claim, policy and confirmation, dispatch,
 * reconciliation of an unknown outcome, compensation. Export it from your workflow module.
 */
export async function actionWorkflow(input: ActionInput): Promise<ActionSnapshot> {
  const state = new ActionState(input);
  // Decided before the first await: the claim that started this workflow is handled right after it.
  const ledgerInWorker = patched(LEDGER_IN_WORKER_PATCH);
  state.answersWaitForLedger = ledgerInWorker;
  state.currentAnswers = patched(CURRENT_CLAIM_ANSWERS_PATCH);
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
  state.decisions.trust = { keys: policy.trustedApprovalKeys, operators: policy.operators };
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
  let recovered = input.recovered;
  /** The row as a run's act left it when this workflow took it over (see HandedOver). */
  let takenFrom: HandedOver | undefined;

  if (policy.ledger) {
    // The durable ledger outlives this history: the row is claimed first, then every status change is written
    // before it takes effect (so `dispatching` is on record before anything is sent).
    const { recordLedger, claimLedgerRow } = proxyLocalActivities<Activities>({
      startToCloseTimeout: POLICY_START_TO_CLOSE,
      summary: `ledger: ${input.key}`,
    });
    const claimedAt = state.snap.audit[0]?.at ?? nowIso();
    const row = { key: input.key, tenant: input.tenant, requestHash: input.requestHash, owner: input.owner, claimedAt };
    const holder = ledgerInWorker ? `action:${workflowInfo().runId}` : undefined;
    if (holder) {
      // Whoever started this workflow, the worker's ledger decides first: a key it knows is never sent again.
      let claim = await claimLedgerRow({ ...row, holder });
      while (claim.kind === 'busy') {
        // A run's act holds the row and is sending now: wait for it to settle the row or let go of it (its lease).
        const leftMs = Date.parse(claim.leaseUntil) - Date.now();
        await sleep(Math.min(Math.max(leftMs, BUSY_POLL_MIN_MS), BUSY_POLL_MAX_MS));
        claim = await claimLedgerRow({ ...row, holder });
      }
      if (claim.kind === 'mismatch') {
        const refusal = new RetrysafeError(
          'IntentMismatch',
          `action ${input.key} was claimed with request hash ${claim.recordedHash.slice(0, 12)}… (the ledger's ` +
            `record); this claim carries ${input.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
          { key: input.key, expected: claim.recordedHash, got: input.requestHash, source: 'ledger' },
        );
        state.refuse(refusal);
        await fail('IntentMismatch', refusal.message);
        return state.finish();
      }
      if (claim.kind === 'settled') {
        state.adoptSettled(claim.snapshot);
        return state.finish();
      }
      if (claim.kind === 'unresolved') recovered = claim.recovered;
      if (claim.kind === 'handed-over') takenFrom = claim.from;
    }
    // A workflow that recovers a key from the ledger numbers its entries after the ones already there.
    const seqBase = recovered ? recovered.seq + 1 : takenFrom ? takenFrom.seq + 1 : 0;
    state.recordStatus = (index, entry) =>
      recordLedger({
        ...row,
        ...(holder ? { holder } : {}),
        status: {
          seq: seqBase + index,
          status: entry.to,
          at: entry.at,
          reason: entry.reason,
          ...(entry.by ? { by: entry.by } : {}),
          ...(state.snap.providerRef ? { providerRef: state.snap.providerRef } : {}),
          outcome: ledgerOutcome(state.snap),
          settled: isFinal(entry.to),
        },
      });
    await state.recordStatus(0, state.snap.audit[0]);
  }
  state.ledgerChecked = true;

  const decision = policyDecision(policy.tenantPolicy);
  state.snap.decisionMode = decision.mode;
  // act starts as a first send, unless a person already cleared a resend (a recovered action).
  let mode: DispatchMode = 'first';
  /** Whether the loop below starts by dispatching, or (taken over from a run's act that may have sent) by reconciling. */
  let next: 'dispatch' | 'reconcile' = 'dispatch';
  // Taken over from a run's act that may have sent, reconciliation comes first and nothing is sent blindly; nothing
  // was sent while the row said `planned`, so such an action goes on as a new one.
  const handedOver = takenFrom?.status === 'planned' ? undefined : takenFrom;
  if (handedOver) {
    // The run's act sent with the key, or may have, and could not learn the outcome (or stopped holding the row):
    // the row's `dispatching` stands, and what happened is found out by evidence and lookups, as for any unknown.
    const h = handedOver;
    await state.move('dispatching', `dispatched by the run's act (${h.holder}); the row said ${h.status} at ${h.at}`);
    state.snap.dispatches++;
    state.firstDispatchDecided = true;
    lastDispatchEndedMs = Date.now();
    await state.move('unknown', `taken over from the run's act, whose outcome is unknown: reconciling`);
    mode = 'maybe-sent';
    next = 'reconcile';
  } else if (recovered) {
    // The ledger held this key unresolved and its workflow is gone: whether it happened is unknown, and only a
    // person may say. Nothing is sent until one does; their signed resolution binds this exact request, so a
    // "did not happen" clears one resend with the same key (never for an action the agent may not perform).
    const r = recovered;
    await state.move(
      'needs_review',
      `recovered from the ledger: its workflow is gone and the ledger held it as ${r.status}` +
        `${r.providerRef ? ` (${r.providerRef})` : ''} at ${r.at}; a person decides whether it happened`,
    );
    if ((await awaitReview()) !== 'dispatch' || decision.mode === 'human-only') return state.finish();
    mode = 'operator-cleared';
  } else if (decision.mode === 'human-only') {
    // Above the limits one approval click is not enough scrutiny: the agent never performs this action.
    // A person does it (or decides it must not happen) and records the outcome here.
    showDryRun(decision);
    await state.move('needs_review', `human-only: ${decision.reasons.join('; ') || decision.rows.join(', ')}`);
    await awaitReview();
    return state.finish();
  } else if (decision.mode === 'confirm' && !(await awaitConfirmation(decision))) return state.finish();

  // ── act ──
  for (;;) {
    if (next === 'dispatch') {
      const byOwner = ownerSends(mode);
      await state.move(
        'dispatching',
        mode === 'first'
          ? 'dispatch'
          : mode === 'operator-cleared'
            ? 'dispatch after an operator cleared it'
            : 'redispatch with the same key',
        undefined,
        // The owner learns of this dispatch from its claim's answer.
        byOwner ? input.owner : undefined,
      );
      const result = await dispatch(mode, byOwner);
      if (result === 'confirmed' || result === 'failed') break;
    }
    next = 'dispatch';
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

  /** One line for the ledger's outcome column. */
  function ledgerOutcome(s: ActionSnapshot): string {
    if (s.status === 'confirmed' || s.status === 'compensated') return `${s.status}: ${s.providerRef ?? s.summary}`;
    if (s.error) return `${s.status}: ${s.error.code}: ${s.error.message}`;
    return `${s.status}: ${s.summary}`;
  }

  function policyDecision(tenantPolicy: TenantPolicy | undefined): PolicyDecision {
    return decideAction(tool, input.intent, tenantPolicy);
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
    const decided = await state.decisions.during(() =>
      condition(() => state.approval !== undefined, CONFIRMATION_WINDOW),
    );
    if (!decided || !state.approval) {
      await fail(
        'DecisionRejected',
        'no verified confirmation arrived within the confirmation window; nothing was sent',
      );
      return false;
    }
    const { claims, publicKeyId } = state.approval;
    if (claims.decision === 'reject') {
      await fail('DecisionRejected', `rejected by ${claims.operator}; nothing was sent`, claims.operator);
      return false;
    }
    // Re-read the volatile facts before acting: the approver's key may have been revoked, the tenant's limits changed.
    const fresh = await loadVolatilePolicy({ tenant: input.tenant });
    if (!fresh.trustedApprovalKeys[publicKeyId]) {
      await fail(
        'DecisionRejected',
        `approval key ${publicKeyId} is no longer trusted; nothing was sent`,
        claims.operator,
      );
      return false;
    }
    if (Date.parse(claims.expiresAt) <= Date.now()) {
      await fail(
        'DecisionRejected',
        `the approval by ${claims.operator} expired before the action could start; nothing was sent`,
        claims.operator,
      );
      return false;
    }
    const recheck = policyDecision(fresh.tenantPolicy);
    if (recheck.mode === 'human-only' && d.mode !== 'human-only') {
      await state.move(
        'needs_review',
        `policy changed since the approval: now ${recheck.mode} (${recheck.reasons.join('; ')})`,
        claims.operator,
      );
      if ((await awaitReview()) !== 'dispatch') return false;
    }
    state.snap.approvedBy = claims.operator;
    state.note(`approved (key ${publicKeyId}, expires ${claims.expiresAt})`, claims.operator);
    return true;
  }

  async function fail(code: string, message: string, by?: string, quietFor?: string): Promise<void> {
    state.snap.error = { code, message };
    await state.move('failed', message, by, quietFor);
  }

  /**
   * The owner sends the first dispatch itself when it asked to (its claim carried `send`) and nothing stands
   * between the policy and the send: an automatic decision, not an undo, not recovered from the ledger.
   */
  function ownerSends(dispatchMode: DispatchMode): boolean {
    return (
      dispatchMode === 'first' &&
      state.snap.dispatches === 0 &&
      state.sendRequest !== undefined &&
      decision.mode === 'automatic' &&
      !input.compensation &&
      !recovered
    );
  }

  /** One dispatch: by the executor here, or by the owner (`byOwner`, decided by ownerSends before `dispatching`). */
  async function dispatch(dispatchMode: DispatchMode, byOwner = false): Promise<'confirmed' | 'failed' | 'unknown'> {
    state.snap.dispatches++;
    // Decided before the first await, so the owner's waiting claim answers with it (see ActionState.install).
    state.firstDispatchDecided = true;
    if (byOwner) return ownerDispatch();
    try {
      const outcome = await executeAction({
        key: input.key,
        intent: input.intent,
        requestHash: input.requestHash,
        mode: dispatchMode,
      });
      return applyOutcome(outcome);
    } catch (err) {
      lastDispatchEndedMs = Date.now();
      // A failure says what was sent too: in its details (a rejection), or in the last heartbeat (a timeout).
      state.recordRequests(
        requestLogIn(
          err instanceof ActivityFailure && err.cause instanceof TimeoutFailure
            ? err.cause.lastHeartbeatDetails
            : errorDetailsOf(err),
        ),
      );
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

  async function applyOutcome(
    outcome: Awaited<ReturnType<typeof executeAction>>,
    quietFor?: string,
  ): Promise<'confirmed' | 'unknown'> {
    state.recordRequests(outcome);
    lastDispatchEndedMs = Date.now();
    if (outcome.status === 'confirmed') {
      state.snap.providerRef = outcome.providerRef;
      state.snap.record = outcome.record;
    }
    const move = reportedMove({ kind: 'outcome', outcome });
    await state.move(move.to, move.reason, undefined, quietFor);
    return outcome.status;
  }

  /**
   * The owner's claim was answered "you send": its own activity calls the executor with this key, then
   * reports here. This workflow stays the record: it applies the report (without telling the owner what
   * it reported), reconciles an unknown one, and takes over when no report comes within the window: the
   * owner's activity has no attempt left by then (its schedule-to-close is shorter).
   */
  async function ownerDispatch(): Promise<'confirmed' | 'failed' | 'unknown'> {
    const grant = { token: state.sendRequest!, answers: 0 };
    state.grant = grant;
    state.note(`the owner ${input.owner} sends this dispatch itself, with the key`);
    await condition(() => state.grant?.report !== undefined, OWNER_REPORT_WINDOW);
    const report: DispatchReport = state.grant?.report ?? {
      kind: 'no-verdict',
      message: `the owner did not report its dispatch within ${String(OWNER_REPORT_WINDOW)}`,
      sends: 0,
    };
    state.grant = undefined;
    // The owner is not told what it reported itself, if it still holds the report's token (see quietForReport).
    const quiet = state.quietForReport(grant.token);
    if (report.kind === 'outcome') return applyOutcome(report.outcome, quiet);
    state.recordRequests(reportedRequests(report));
    lastDispatchEndedMs = Date.now();
    const move = reportedMove(report);
    if (move.to === 'failed') {
      await fail(move.error!.code, move.error!.message, undefined, quiet);
      return 'failed';
    }
    // No verdict: the owner is waiting to hear what reconciliation finds, so it is told.
    await state.move(move.to, move.reason);
    return 'unknown';
  }

  async function reconcile(): Promise<'confirmed' | 'absent' | 'unresolved'> {
    const eventArrived = () => state.unweighedEvent(true) !== undefined;
    for (let check = 0; check < RECONCILE_MAX_CHECKS; check++) {
      if (!tool.hasLookup) {
        // Nothing to ask, and so nothing can verify an event: it goes to a person with the evidence shown.
        const event = state.unweighedEvent(true);
        if (event) {
          weighUnverifiable(event);
          return 'unresolved';
        }
        // No event yet: wait a little for one, then hand over to a human.
        if (check >= 2) return 'unresolved';
        await condition(eventArrived, RECONCILE_INTERVAL);
        continue;
      }
      const lagLeft = lastDispatchEndedMs + tool.readAfterWriteLagMs - Date.now();
      if (lagLeft > 0) {
        // An empty lookup now would prove nothing (and an event is no proof without a lookup that agrees):
        // wait out the read-after-write lag on a durable timer.
        await sleep(lagLeft);
        continue;
      }
      const found = await lookUpAndRecord();
      if (!found) {
        await sleep(RECONCILE_INTERVAL);
        continue;
      }
      if (found.found) {
        state.snap.providerRef = found.providerRef;
        state.snap.record = found.record;
        const agreeing = weighAgainstLookup(found.providerRef);
        await state.move(
          'confirmed',
          `lookup found ${found.providerRef}` +
            (agreeing[0] ? `, as provider event ${agreeing[0].type} (${agreeing[0].eventId}) said` : ''),
        );
        return 'confirmed';
      }
      if (weighAgainstAbsence().length > 0 && !resendIsSafe()) {
        // The provider says it happened, its lookup says not: resending without a key could duplicate it.
        state.note('a provider event says it succeeded, but the lookup after the lag finds nothing; a person decides');
        return 'unresolved';
      }
      return 'absent';
    }
    return 'unresolved';
  }

  /** A resend with the same key cannot duplicate: the provider or our own dedupe row answers with the first. */
  function resendIsSafe(): boolean {
    return tool.dedupe === 'idempotency-key' || tool.dedupe === 'transactional';
  }

  /** The lookup found the effect: events naming it agree; an event naming another reference is a conflict. */
  function weighAgainstLookup(providerRef: string | undefined): ProviderEvent[] {
    const agreeing: ProviderEvent[] = [];
    for (const event of state.unweighedSuccesses()) {
      if (!providerRef || event.providerRef === providerRef) {
        state.weigh(event, { trustworthy: true, detail: `a lookup agrees${providerRef ? ` (${providerRef})` : ''}` });
        agreeing.push(event);
      } else {
        const why = `names ${event.providerRef}, but the lookup found ${providerRef}`;
        state.weigh(event, { trustworthy: false, detail: why, refutedBy: why });
      }
    }
    return agreeing;
  }

  /** The lookup, trusted after the lag, found nothing: every success event is contradicted. */
  function weighAgainstAbsence(): ProviderEvent[] {
    const refuted = state.unweighedSuccesses();
    const why = 'says it succeeded, but a lookup after the read-after-write lag found nothing';
    for (const event of refuted) state.weigh(event, { trustworthy: false, detail: why, refutedBy: why });
    return refuted;
  }

  /** Without a lookup an event cannot be verified: it is recorded, and the decision is a person's. */
  function weighUnverifiable(event: ProviderEvent): void {
    state.weigh(event, { trustworthy: false, detail: `${tool.name} has no lookup to verify it; a person decides` });
    state.note(
      `provider event ${event.type} (${event.eventId}) says it ${event.outcome}; nothing can verify it, so a person decides`,
    );
  }

  /** An event that arrived during review confirms only when a lookup agrees; true when it confirmed. */
  async function weighLateEvent(event: ProviderEvent): Promise<boolean> {
    if (!tool.hasLookup) {
      weighUnverifiable(event);
      return false;
    }
    const lagLeft = lastDispatchEndedMs + tool.readAfterWriteLagMs - Date.now();
    if (lagLeft > 0) await sleep(lagLeft);
    for (let attempt = 0; attempt < LATE_EVENT_LOOKUPS; attempt++) {
      const found = await lookUpAndRecord();
      if (!found) {
        await sleep(RECONCILE_INTERVAL);
        continue;
      }
      if (!found.found) {
        weighAgainstAbsence();
        return false;
      }
      state.snap.providerRef = found.providerRef;
      state.snap.record = found.record;
      weighAgainstLookup(found.providerRef);
      await state.move(
        'confirmed',
        `late provider event ${event.type} (${event.eventId}), and a lookup found ${found.providerRef}`,
      );
      return true;
    }
    state.weigh(event, { trustworthy: false, detail: 'the lookup could not be asked; a person decides' });
    return false;
  }

  /**
   * One reconciliation lookup, recorded as a check. Undefined when the provider could not be asked: that
   * proves nothing either way (recorded as an untrustworthy check), and the caller asks again later.
   */
  async function lookUpAndRecord(): Promise<Awaited<ReturnType<typeof lookupAction>> | undefined> {
    try {
      const found = await lookupAction({ key: input.key, intent: input.intent, requestHash: input.requestHash });
      state.snap.checks.push({
        at: nowIso(),
        kind: 'lookup',
        found: found.found,
        trustworthy: true,
        detail: found.detail,
      });
      return found;
    } catch (err) {
      state.snap.checks.push({
        at: nowIso(),
        kind: 'lookup',
        found: false,
        trustworthy: false,
        detail: causeMessage(err),
      });
      return undefined;
    }
  }

  /** Waits for an operator (or late evidence) and applies the decision. Returns 'dispatch' to send again. */
  async function awaitReview(): Promise<'done' | 'dispatch'> {
    // A review may wait for days: decide with the keys and operator scopes in force now, not at the start.
    await state.decisions.load();
    return state.decisions.during(reviewed);
  }

  async function reviewed(): Promise<'done' | 'dispatch'> {
    // A late event wakes the review. It confirms only when a lookup agrees; without a lookup it is recorded
    // for the person deciding.
    const lateEvent = () => state.unweighedEvent(!tool.hasLookup);
    const arrived = () => state.pendingResolution() !== undefined || lateEvent() !== undefined;
    const escalateAt = Date.now() + msToNumber(ESCALATION_WINDOW);
    let escalated = false;
    for (;;) {
      if (escalated) await condition(arrived);
      else if (!(await condition(arrived, Math.max(escalateAt - Date.now(), 1)))) {
        log.warn('action escalated: unresolved past the escalation window', { key: input.key });
        state.note('escalated: unresolved past the escalation window');
        escalated = true;
        await condition(arrived);
      }
      if (state.pendingResolution()) break;
      const lateProof = lateEvent()!;
      if (await weighLateEvent(lateProof)) return 'done';
    }
    const entry = state.pendingResolution();
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
