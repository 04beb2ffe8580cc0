import { Context, ApplicationFailure } from '@temporalio/activity';
import { RetrysafeError, type ErrorCode } from '../policies/errors';
import { DISPATCH_RETRY, HEARTBEAT_INTERVAL_MS, TRANSIENT_BACKOFF } from '../policies/timeouts';
import type { AnyTool, ToolContext } from '../policies/tool';
import type { LookupAnswer, RejectionReason, ToolOutcome } from '../policies/tool-outcome';
import type { Intent, ToolRegistry } from '../policies/tool-registry';
import type { CrashHook } from './crash-points';
import { RequestLog } from './request-log';
import type { DispatchOutcome, DispatchReport } from '../messages/action';
import { requestLogIn } from '../policies/provider-requests';
import { outcomeOfError } from './transport/http';
import { noRetrysafeMetrics, secondsSince, type RetrysafeMetrics } from '../metrics/instruments';
import { withProviderSpan } from '../tracing/provider-span';

/**
 * The executor: one narrow path from a persisted intent to its tool, with the action's key. This table
 * is the only place that decides what a retry may do, whatever the tool's transport:
 *
 *   attempt 1 ─▶ execute ─▶ committed ─▶ confirmed
 *   attempt N>1 (the previous attempt died and may have reached the provider):
 *     idempotency-key, transactional, inside the key horizon ─▶ execute again with the same key (the
 *                                        provider or the dedupe row answers with the original)
 *     idempotency-key, transactional, past the key horizon (the tool's keyRetentionMs, less a margin, since
 *       the first possible send: the key may be forgotten and a resend taken as new):
 *         with a lookup    ─▶ as `lookup` below: found ─▶ confirmed; reliably absent ─▶ execute
 *         without a lookup ─▶ unknown, nothing sent
 *     lookup ─▶ look up; found ─▶ confirmed; empty inside the lag window ─▶ wait, look again;
 *               reliably absent ─▶ execute
 *     none   ─▶ unknown, nothing sent
 *   a read (kind 'read') changes nothing: it is executed again whatever its dedupe
 *   not-committed (429, 5xx, refused connection): retried here with jittered backoff
 *   ambiguous (reset, cut reply, timeout): the attempt is now maybe-sent, and the rows above apply
 *   rejected (declined, invalid, unauthorized, key conflict): a typed non-retryable failure
 */
export interface ExecuteInput {
  key: string;
  intent: Intent;
  requestHash: string;
  /**
   * `first` when no earlier dispatch of this action can have reached the provider; `maybe-sent` when
   * an earlier dispatch may have (reconciliation proved absence): then the contract's rules for retries
   * apply from the first attempt; `operator-cleared` when an authorized operator established that the
   * earlier dispatch did not happen: the first attempt sends, even on a provider with no key. The key horizon
   * counts from this dispatch's first attempt: whatever an earlier one sent was proven absent before it.
   */
  mode: 'first' | 'maybe-sent' | 'operator-cleared';
  /**
   * The owner's claim-and-send knows that no earlier attempt of its activity was granted the send (its
   * claim failed or timed out before): an attempt after the first is then as good as the first.
   */
  earlierAttemptsUnsent?: boolean;
}

/** What the caller of the executor (not Temporal: an activity's only argument is its input) adds around a send. */
export interface SendHooks {
  /**
   * Awaited before each request that may change something at the provider; a throw stops the send (the record-first
   * path fences here: the run's act still holds the action's ledger row, with `dispatching` on record).
   */
  beforeSend?: () => Promise<void>;
}

/**
 * `sends` counts the requests sent for this dispatch, including those of activity attempts that died
 * (activities/request-log.ts); `requests` lists them with what the provider answered.
 */
export type ExecuteOutcome = DispatchOutcome;

export interface ExecuteDeps {
  tools: ToolRegistry;
  crash: CrashHook;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  /** What the executor counts (metrics/instruments.ts): attempts, requests and their answers, sends per dispatch. */
  metrics?: RetrysafeMetrics;
}

const REJECTION_CODES: Record<RejectionReason, ErrorCode> = {
  declined: 'BusinessRejected',
  invalid: 'ProviderValidationRejected',
  unauthorized: 'AuthorizationRejected',
  conflict: 'IntentMismatch',
};

type Attempt = { state: 'not-sent' | 'maybe-sent'; lastError?: string; lastAmbiguousAtMs?: number };

/**
 * How much earlier than its declared retention a key is treated as possibly forgotten: a tenth of it, at most
 * an hour (24 h keys are looked up from 23 h on). It absorbs clock skew between us, Temporal and the provider,
 * and a provider that counts its retention from a moment slightly before ours.
 */
export const KEY_HORIZON_MARGIN = { fraction: 0.1, maxMs: 60 * 60 * 1000 } as const;

/**
 * When a key sent at `firstPossibleSendMs` may no longer be remembered by a provider that keeps keys for
 * `keyRetentionMs`: from its retention less the margin.
 */
export function keyHorizonMs(firstPossibleSendMs: number, keyRetentionMs: number): number {
  const margin = Math.min(keyRetentionMs * KEY_HORIZON_MARGIN.fraction, KEY_HORIZON_MARGIN.maxMs);
  return firstPossibleSendMs + keyRetentionMs - margin;
}

export function createExecuteAction(deps: ExecuteDeps) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = deps.random ?? Math.random;
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? noRetrysafeMetrics;

  return async function executeAction(input: ExecuteInput, hooks: SendHooks = {}): Promise<ExecuteOutcome> {
    const ctx = Context.current();
    const verified = verifiedInput(deps.tools, input);
    const { tool } = verified;
    metrics.executorAttempt(tool.name);
    const requests = RequestLog.resume(ctx, now);
    let ended = false;
    try {
      const outcome = await dispatch(ctx, input, verified, requests, hooks);
      ended = true;
      return outcome;
    } catch (err) {
      // A failure this attempt raises ends the dispatch; a heartbeat timeout or a crash does not (the next
      // attempt resumes the request log and counts them all when the dispatch ends).
      ended = true;
      throw err;
    } finally {
      if (ended) metrics.dispatchSends(tool.name, requests.sends);
    }
  };

  async function dispatch(
    ctx: Context,
    input: ExecuteInput,
    { tool, toolInput }: ReturnType<typeof verifiedInput>,
    requests: RequestLog,
    hooks: SendHooks,
  ): Promise<ExecuteOutcome> {
    const { key } = input;
    const attempt: Attempt = {
      // An operator's clearance counts only for the first attempt: if that attempt dies, the rules apply again.
      // A read has no effect to duplicate, so it is never "maybe sent".
      state:
        tool.kind !== 'read' && ((ctx.info.attempt > 1 && !input.earlierAttemptsUnsent) || input.mode === 'maybe-sent')
          ? 'maybe-sent'
          : 'not-sent',
    };
    const log_ = () => requests.details();
    /** What every outcome and failure reports of the requests made. */
    const made = () => ({ sends: requests.sends, requests: requests.details().requests });
    const log = ctx.log;
    log.info('execute', { key, operation: tool.name, attempt: ctx.info.attempt, state: attempt.state });
    // A tool's own heartbeat carries the request log too: the next attempt resumes from the last one received.
    const toolCtx = toolContext(ctx, key, log_);

    for (let tries = 0; ; tries++) {
      if (tries >= TRANSIENT_BACKOFF.maxTries) {
        if (attempt.state === 'maybe-sent') {
          return {
            status: 'unknown',
            reason: `provider unreachable after a possibly committed request: ${attempt.lastError}`,
            ...made(),
          };
        }
        throw ApplicationFailure.create({
          type: 'TransientProviderError',
          message: `${tool.name} unavailable after ${tries} tries; nothing was committed: ${attempt.lastError}`,
          nonRetryable: true,
          details: [made()],
        });
      }
      if (tries > 0) await backoff(tries);

      if (attempt.state === 'maybe-sent') {
        if (tool.dedupe === 'none') {
          return {
            status: 'unknown',
            reason: requests.sends
              ? 'a request may have committed, and this provider has no key and no lookup to tell: never sent again blindly'
              : 'an earlier attempt may have reached a provider with no key and no lookup',
            ...made(),
          };
        }
        const horizon = tool.dedupe === 'lookup' ? undefined : keyHorizonPassed();
        if (horizon && !tool.lookup) {
          return {
            status: 'unknown',
            reason:
              `${horizon}: a resend under it could be taken as a new request, and ${tool.name} has no lookup ` +
              'to tell whether the first one committed: never sent again blindly',
            ...made(),
          };
        }
        if (tool.dedupe === 'lookup' || horizon) {
          if (horizon) log.info('past the key horizon: looking up before any resend', { key, horizon });
          let answer: LookupAnswer | undefined;
          try {
            answer = await lookUpUntilLagPassed();
          } catch (err) {
            attempt.lastError = `lookup failed: ${(err as Error).message}`;
            log.warn('lookup failed; proves nothing, trying again', { key, error: attempt.lastError });
            continue;
          }
          if (answer?.found)
            return {
              status: 'confirmed',
              providerRef: answer.providerRef,
              record: answer.result ?? null,
              via: 'lookup',
              ...made(),
            };
          log.info('lookup proved absence; sending', { key });
        }
      }
      if (tool.kind !== 'read') await hooks.beforeSend?.();
      deps.crash('before-send', tool.name);
      const request = requests.start('send');
      const sentAtMs = now();
      let outcome: ToolOutcome;
      try {
        outcome = await withHeartbeat(
          ctx,
          () =>
            withProviderSpan(
              tool.name,
              'send',
              async () => {
                try {
                  return await tool.execute(toolInput, toolCtx);
                } catch (err) {
                  return outcomeOfError(err, tool.name);
                }
              },
              (o) => o.outcome,
            ),
          log_,
        );
      } catch (err) {
        outcome = outcomeOfError(err, tool.name);
      }
      requests.answered(request, answerOf(outcome));
      metrics.providerRequest(tool.name, 'send', outcome.outcome, secondsSince(sentAtMs, now));
      ctx.heartbeat(log_());
      deps.crash('after-commit', tool.name);
      switch (outcome.outcome) {
        case 'committed':
          if (typeof outcome.providerRef !== 'string' || outcome.providerRef === '') {
            throw new RetrysafeError(
              'ProviderValidationRejected',
              `${tool.name} answered committed without a providerRef`,
              { key, ...made() },
            ).toFailure();
          }
          return {
            status: 'confirmed',
            providerRef: outcome.providerRef,
            record: outcome.result ?? null,
            via: outcome.replayed ? 'replay' : 'send',
            ...made(),
          };
        case 'rejected': {
          const code = REJECTION_CODES[outcome.reason] ?? 'ProviderValidationRejected';
          const suffix = outcome.reason === 'conflict' ? ' (the key was used for another request)' : '';
          throw new RetrysafeError(code, `${tool.name} rejected: ${outcome.message}${suffix}`, {
            key,
            reason: outcome.reason,
            ...(outcome.status !== undefined ? { status: outcome.status } : {}),
            ...made(),
          }).toFailure();
        }
        case 'not-committed':
          attempt.lastError = outcome.reason;
          log.warn('provider did not commit; retrying', { key, error: outcome.reason });
          continue;
        case 'ambiguous':
          attempt.lastError = outcome.message;
          if (tool.kind !== 'read') attempt.state = 'maybe-sent';
          attempt.lastAmbiguousAtMs = now();
          log.warn('outcome ambiguous: the request may have committed', { key, error: outcome.message });
          continue;
        default:
          throw new RetrysafeError(
            'ProviderValidationRejected',
            `${tool.name} answered ${JSON.stringify(outcome)}, which is not a tool outcome`,
            { key, ...made() },
          ).toFailure();
      }
    }

    /**
     * Why the provider may have forgotten the key, or undefined while it is bound to remember it. Counted from
     * the earliest moment anything of this dispatch can have been sent (its first attempt's scheduling, or the
     * first send in the request log if that reads earlier) to now, taking the later of this worker's clock and
     * Temporal's scheduling of this attempt: on skewed clocks the key counts as forgotten sooner, never later.
     * Earlier dispatches need not count: the action workflow redispatches only after a lookup proved absence.
     */
    function keyHorizonPassed(): string | undefined {
      const retention = tool.keyRetentionMs;
      if (retention === undefined || (tool.dedupe !== 'idempotency-key' && tool.dedupe !== 'transactional')) {
        return undefined;
      }
      const firstSend = requests.details().requests.find((r) => r.kind === 'send');
      const firstSendMs = firstSend ? Date.parse(firstSend.at) : Number.NaN;
      const firstPossibleSendMs = Math.min(
        ctx.info.scheduledTimestampMs,
        Number.isFinite(firstSendMs) ? firstSendMs : Number.POSITIVE_INFINITY,
      );
      const nowMs = Math.max(now(), ctx.info.currentAttemptScheduledTimestampMs);
      if (nowMs < keyHorizonMs(firstPossibleSendMs, retention)) return undefined;
      return (
        `the provider keeps keys for ${readableDuration(retention)} and the first request may have gone ` +
        `${readableDuration(nowMs - firstPossibleSendMs)} ago (${new Date(firstPossibleSendMs).toISOString()}), so it may ` +
        'have forgotten the key'
      );
    }

    async function lookUpUntilLagPassed(): Promise<LookupAnswer | undefined> {
      if (!tool.lookup) return undefined;
      // An empty answer proves absence only once the read API has caught up with any earlier send: one from
      // a dead attempt (before this attempt was scheduled) or an ambiguous one in this attempt.
      const lastPossibleSendMs = Math.max(ctx.info.currentAttemptScheduledTimestampMs, attempt.lastAmbiguousAtMs ?? 0);
      const trustworthyAfter = lastPossibleSendMs + tool.readAfterWriteLagMs;
      for (;;) {
        deps.crash('before-lookup', tool.name);
        const request = requests.start('lookup');
        const askedAtMs = now();
        let answer: LookupAnswer;
        try {
          answer = await withHeartbeat(
            ctx,
            () => withProviderSpan(tool.name, 'lookup', () => tool.lookup!(toolInput, toolCtx), lookupOutcome),
            log_,
          );
        } catch (err) {
          requests.answered(request, `lookup failed: ${(err as Error).message}`);
          metrics.providerRequest(tool.name, 'lookup', 'failed', secondsSince(askedAtMs, now));
          throw err;
        }
        requests.answered(request, answer.found ? `found ${answer.providerRef}` : 'not found');
        metrics.providerRequest(
          tool.name,
          'lookup',
          answer.found ? 'found' : 'not-found',
          secondsSince(askedAtMs, now),
        );
        if (answer.found) return answer;
        const wait = trustworthyAfter - now();
        if (wait <= 0) return answer;
        log.info('lookup empty inside the read-after-write lag; waiting', { key, waitMs: wait });
        await withHeartbeat(ctx, () => sleep(wait), log_);
      }
    }

    async function backoff(tries: number) {
      const cap = Math.min(TRANSIENT_BACKOFF.maxMs, TRANSIENT_BACKOFF.initialMs * 2 ** (tries - 1));
      await withHeartbeat(ctx, () => sleep(Math.round(cap / 2 + (random() * cap) / 2)), log_);
    }
  }
}

/** A duration for a reason: hours with one decimal from an hour on, else seconds. */
function readableDuration(ms: number): string {
  return ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(1)} h` : `${Math.round(ms / 1000)} s`;
}

/** A lookup's answer in the metrics' and spans' words. */
export function lookupOutcome(answer: LookupAnswer): 'found' | 'not-found' {
  return answer.found ? 'found' : 'not-found';
}

/** One line for the request log: what the provider answered, in the four outcomes' words. */
export function answerOf(outcome: ToolOutcome): string {
  switch (outcome.outcome) {
    case 'committed':
      return `committed ${outcome.providerRef}${outcome.replayed ? ' (the original, replayed for the same key)' : ''}`;
    case 'not-committed':
      return `not committed: ${outcome.reason}`;
    case 'ambiguous':
      return `ambiguous (may have committed): ${outcome.message}`;
    case 'rejected':
      return `rejected (${outcome.reason}${outcome.status !== undefined ? `, ${outcome.status}` : ''}): ${outcome.message}`;
    default:
      return `not a tool outcome: ${JSON.stringify(outcome).slice(0, 200)}`;
  }
}

/**
 * The intent as the tool takes it, checked once more against the hash the action was claimed with:
 * nothing reaches a provider under a key whose request it does not match.
 */
export function verifiedInput(
  tools: ToolRegistry,
  input: { key: string; intent: Intent; requestHash: string },
): { tool: AnyTool; toolInput: Record<string, unknown> } {
  try {
    const intent = tools.parseIntent(input.intent);
    const hash = tools.hash(intent);
    if (hash !== input.requestHash) {
      throw new RetrysafeError(
        'IntentMismatch',
        `action ${input.key}: the intent hashes to ${hash.slice(0, 12)}…, not the claimed ${input.requestHash.slice(0, 12)}…`,
        {
          key: input.key,
        },
      );
    }
    const { operation: _operation, ...toolInput } = intent;
    return { tool: tools.get(intent.operation), toolInput };
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
}

/**
 * What a tool is handed. `details` is what every heartbeat carries (the executor's request log): a tool that
 * heartbeats itself must not replace it with nothing.
 */
export function toolContext(ctx: Context, key: string, details?: () => unknown): ToolContext {
  return {
    key,
    attempt: ctx.info.attempt,
    heartbeat: () => ctx.heartbeat(details?.()),
    signal: ctx.cancellationSignal,
    log: { info: (m, meta) => ctx.log.info(m, { key, ...meta }), warn: (m, meta) => ctx.log.warn(m, { key, ...meta }) },
  };
}

/**
 * Heartbeats while a slow call is in flight, so a dead worker is detected by heartbeat timeout. The
 * details (the request log) go with every heartbeat, so the next attempt knows what this one sent.
 */
export async function withHeartbeat<T>(ctx: Context, fn: () => Promise<T>, details?: () => unknown): Promise<T> {
  ctx.heartbeat(details?.());
  const timer = setInterval(() => ctx.heartbeat(details?.()), HEARTBEAT_INTERVAL_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** A refusal the executor decided (typed, not to be retried), as opposed to an attempt that died. */
export function isExecutorVerdict(err: unknown): err is ApplicationFailure {
  return (
    err instanceof ApplicationFailure &&
    (err.nonRetryable || (DISPATCH_RETRY.nonRetryableErrorTypes ?? []).includes(err.type ?? ''))
  );
}

/**
 * What one run of the executor reports: its outcome, or the refusal it decided (its code, message and requests).
 * Any other failure (an attempt that died) is thrown, for Temporal's retry.
 */
export async function executionReport(execute: () => Promise<ExecuteOutcome>): Promise<DispatchReport> {
  try {
    return { kind: 'outcome', outcome: await execute() };
  } catch (err) {
    if (!isExecutorVerdict(err)) throw err;
    return {
      kind: 'rejected',
      code: err.type ?? 'OutcomeUnknown',
      message: err.message,
      ...requestLogIn(err.details?.[0]),
    };
  }
}
