/**
 * One activity attempt of one dispatch: the executor's table (execute-action.ts) applied to what this attempt knows.
 *
 * Two retry layers, one concern each. Temporal's retry policy (DISPATCH_RETRY) starts a new attempt only when one
 * died: a killed worker, a missed heartbeat, start-to-close; every verdict this class reaches is returned or thrown
 * as non-retryable. The loop in `run` retries the provider's own transient answers (429, 5xx, a reset) inside the
 * attempt, because only the live attempt knows which of them were "not committed": a new Temporal attempt must
 * treat an earlier one as maybe-sent (it may have died after a commit), and on a provider without a key that means
 * `unknown` and a person, where one more try after a 503 was safe.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import { RetrysafeError, type ErrorCode } from '../policies/errors';
import { TRANSIENT_BACKOFF } from '../policies/timeouts';
import type { AnyTool, ToolContext } from '../policies/tool';
import type { LookupAnswer, RejectionReason, ToolOutcome } from '../policies/tool-outcome';
import type { RetrysafeMetrics } from '../metrics/instruments';
import { secondsSince } from '../metrics/instruments';
import { withProviderSpan } from '../tracing/provider-span';
import type { CrashHook } from './crash-points';
import type { RequestLog } from './request-log';
import { outcomeOfError } from '../transport/http';
import type { DispatchOutcome } from '../messages/action';
import type { Intent } from '../policies/tool-registry';
import type { ApprovalToRecheck } from './before-send';
import type { RecordLedgerInput } from './record-ledger';
import {
  answerOf,
  beat,
  keyHorizonMs,
  lookupOutcome,
  readableDuration,
  toolContext,
  withHeartbeat,
} from './provider-call';

const REJECTION_CODES: Record<RejectionReason, ErrorCode> = {
  declined: 'BusinessRejected',
  invalid: 'ProviderValidationRejected',
  unauthorized: 'AuthorizationRejected',
  conflict: 'IntentMismatch',
};

/** What the executor is asked to do (its table is in execute-action.ts). */
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
   * No earlier attempt of this activity can have sent: the action's ledger row holds no entry of this dispatch
   * (before-send.ts), or a run's act knows its row never reached `dispatching`. An attempt after the first is then as
   * good as the first.
   */
  earlierAttemptsUnsent?: boolean;
  /**
   * The signed approval this dispatch acts on (an action workflow's confirmation): checked once more against the
   * worker's trust and policy while nothing of this dispatch was sent (before-send.ts). Only with `record`.
   */
  approval?: ApprovalToRecheck;
  /** The action workflow's `dispatching` entry for the ledger row it holds: written before anything is sent. */
  record?: RecordLedgerInput;
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

/** What the attempt runs on: the worker's clock, sleep and randomness (replaceable in tests), metrics, crash hook. */
export interface AttemptDeps {
  crash: CrashHook;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
  metrics: RetrysafeMetrics;
}

export class DispatchAttempt {
  /** `maybe-sent` once anything of this dispatch may have reached the provider; then the resend rules apply. */
  private state: 'not-sent' | 'maybe-sent';
  private lastError: string | undefined;
  private lastAmbiguousAtMs: number | undefined;
  /** When this attempt began: an earlier attempt the server gave up on may have been sending until then. */
  private readonly startedAtMs: number;
  private readonly toolCtx: ToolContext;
  /** What every heartbeat carries: the request log, so the next attempt resumes from it. */
  private readonly heartbeatDetails = () => this.requests.details();

  constructor(
    private readonly ctx: Context,
    private readonly deps: AttemptDeps,
    private readonly input: ExecuteInput,
    private readonly tool: AnyTool,
    private readonly toolInput: Record<string, unknown>,
    private readonly requests: RequestLog,
    private readonly hooks: SendHooks,
  ) {
    this.startedAtMs = deps.now();
    const earlierMayHaveSent = ctx.info.attempt > 1 && !input.earlierAttemptsUnsent;
    // An operator's clearance counts only for the first attempt: if that attempt dies, the rules apply again. A read
    // has no effect to duplicate, so it is never "maybe sent".
    this.state =
      tool.kind !== 'read' && (earlierMayHaveSent || input.mode === 'maybe-sent') ? 'maybe-sent' : 'not-sent';
    // A tool's own heartbeat carries the request log too: the next attempt resumes from the last one received.
    this.toolCtx = toolContext(ctx, input.key, this.heartbeatDetails);
  }

  /** Sends (or looks up) until a verdict; transient answers are retried here with jittered backoff. */
  async run(): Promise<ExecuteOutcome> {
    const { key } = this.input;
    this.ctx.log.info('execute', { key, operation: this.tool.name, attempt: this.ctx.info.attempt, state: this.state });
    for (let tries = 0; ; tries++) {
      if (tries >= TRANSIENT_BACKOFF.maxTries) return this.givenUp(tries);
      if (tries > 0) await this.backoff(tries);
      if (this.state === 'maybe-sent') {
        const rule = await this.beforeResend();
        if (rule === 'retry') continue;
        if (rule !== 'send') return rule;
      }
      if (this.tool.kind !== 'read') await this.hooks.beforeSend?.();
      const verdict = this.verdictOf(await this.send());
      if (verdict !== 'retry') return verdict;
    }
  }

  /** The transient tries are spent: unknown if something may have committed, a typed refusal if nothing did. */
  private givenUp(tries: number): ExecuteOutcome {
    if (this.state === 'maybe-sent') {
      const reason = `provider unreachable after a possibly committed request: ${this.lastError}`;
      return { status: 'unknown', reason, ...this.made() };
    }
    throw ApplicationFailure.create({
      type: 'TransientProviderError',
      message: `${this.tool.name} unavailable after ${tries} tries; nothing was committed: ${this.lastError}`,
      nonRetryable: true,
      details: [this.made()],
    });
  }

  /**
   * What may happen when an earlier request may have reached the provider: `send` (a key or a proven absence makes
   * it safe), a verdict (found by lookup; unknown when nothing can tell), or `retry` (the lookup itself failed).
   */
  private async beforeResend(): Promise<ExecuteOutcome | 'send' | 'retry'> {
    const { tool } = this;
    const { key } = this.input;
    if (tool.dedupe === 'none') {
      const reason = this.requests.sends
        ? 'a request may have committed, and this provider has no key and no lookup to tell: never sent again blindly'
        : 'an earlier attempt may have reached a provider with no key and no lookup';
      return { status: 'unknown', reason, ...this.made() };
    }
    const horizon = tool.dedupe === 'lookup' ? undefined : this.keyHorizonPassed();
    if (horizon && !tool.lookup) {
      const reason =
        `${horizon}: a resend under it could be taken as a new request, and ${tool.name} has no lookup ` +
        'to tell whether the first one committed: never sent again blindly';
      return { status: 'unknown', reason, ...this.made() };
    }
    if (tool.dedupe !== 'lookup' && !horizon) return 'send';
    if (horizon) this.ctx.log.info('past the key horizon: looking up before any resend', { key, horizon });
    let answer: LookupAnswer | undefined;
    try {
      answer = await this.lookUpUntilLagPassed();
    } catch (err) {
      this.lastError = `lookup failed: ${(err as Error).message}`;
      this.ctx.log.warn('lookup failed; proves nothing, trying again', { key, error: this.lastError });
      return 'retry';
    }
    if (answer?.found) {
      const { providerRef, result } = answer;
      return { status: 'confirmed', providerRef, record: result ?? null, via: 'lookup', ...this.made() };
    }
    this.ctx.log.info('lookup proved absence; sending', { key });
    return 'send';
  }

  /** One request to the provider, recorded in the request log (and heartbeated) with its answer. */
  private async send(): Promise<ToolOutcome> {
    const { tool, ctx, deps, requests } = this;
    deps.crash('before-send', tool.name);
    const request = requests.start('send');
    const sentAtMs = deps.now();
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
                return await tool.execute(this.toolInput, this.toolCtx);
              } catch (err) {
                return outcomeOfError(err, tool.name);
              }
            },
            (o) => o.outcome,
          ),
        this.heartbeatDetails,
      );
    } catch (err) {
      outcome = outcomeOfError(err, tool.name);
    }
    requests.answered(request, answerOf(outcome));
    deps.metrics.providerRequest(tool.name, 'send', outcome.outcome, secondsSince(sentAtMs, deps.now));
    beat(ctx, this.heartbeatDetails);
    deps.crash('after-commit', tool.name);
    return outcome;
  }

  /** The provider's answer as a verdict: confirmed, a typed refusal (thrown), or `retry` for a transient answer. */
  private verdictOf(outcome: ToolOutcome): ExecuteOutcome | 'retry' {
    const { tool } = this;
    const { key } = this.input;
    switch (outcome.outcome) {
      case 'committed':
        if (typeof outcome.providerRef !== 'string' || outcome.providerRef === '') {
          throw new RetrysafeError(
            'ProviderValidationRejected',
            `${tool.name} answered committed without a providerRef`,
            {
              key,
              ...this.made(),
            },
          ).toFailure();
        }
        return {
          status: 'confirmed',
          providerRef: outcome.providerRef,
          record: outcome.result ?? null,
          via: outcome.replayed ? 'replay' : 'send',
          ...this.made(),
        };
      case 'rejected': {
        const code = REJECTION_CODES[outcome.reason] ?? 'ProviderValidationRejected';
        const suffix = outcome.reason === 'conflict' ? ' (the key was used for another request)' : '';
        throw new RetrysafeError(code, `${tool.name} rejected: ${outcome.message}${suffix}`, {
          key,
          reason: outcome.reason,
          ...(outcome.status !== undefined ? { status: outcome.status } : {}),
          ...this.made(),
        }).toFailure();
      }
      case 'not-committed':
        this.lastError = outcome.reason;
        this.ctx.log.warn('provider did not commit; retrying', { key, error: outcome.reason });
        return 'retry';
      case 'ambiguous':
        this.lastError = outcome.message;
        if (tool.kind !== 'read') this.state = 'maybe-sent';
        this.lastAmbiguousAtMs = this.deps.now();
        this.ctx.log.warn('outcome ambiguous: the request may have committed', { key, error: outcome.message });
        return 'retry';
      default:
        throw new RetrysafeError(
          'ProviderValidationRejected',
          `${tool.name} answered ${JSON.stringify(outcome)}, which is not a tool outcome`,
          { key, ...this.made() },
        ).toFailure();
    }
  }

  /**
   * Why the provider may have forgotten the key, or undefined while it is bound to remember it. Counted from the
   * earliest moment anything of this dispatch can have been sent (its first attempt's scheduling, or the first send
   * in the request log if that reads earlier) to now, taking the later of this worker's clock and Temporal's
   * scheduling of this attempt: on skewed clocks the key counts as forgotten sooner, never later. Earlier dispatches
   * need not count: the action workflow redispatches only after a lookup proved absence.
   */
  private keyHorizonPassed(): string | undefined {
    const { tool, ctx } = this;
    const retention = tool.keyRetentionMs;
    if (retention === undefined || (tool.dedupe !== 'idempotency-key' && tool.dedupe !== 'transactional')) {
      return undefined;
    }
    const firstSend = this.requests.details().requests.find((r) => r.kind === 'send');
    const firstSendMs = firstSend ? Date.parse(firstSend.at) : Number.NaN;
    const firstPossibleSendMs = Math.min(
      ctx.info.scheduledTimestampMs,
      Number.isFinite(firstSendMs) ? firstSendMs : Number.POSITIVE_INFINITY,
    );
    const nowMs = Math.max(this.deps.now(), ctx.info.currentAttemptScheduledTimestampMs);
    if (nowMs < keyHorizonMs(firstPossibleSendMs, retention)) return undefined;
    return (
      `the provider keeps keys for ${readableDuration(retention)} and the first request may have gone ` +
      `${readableDuration(nowMs - firstPossibleSendMs)} ago (${new Date(firstPossibleSendMs).toISOString()}), so it may ` +
      'have forgotten the key'
    );
  }

  /**
   * Looks up until an answer can be trusted: an empty answer proves absence only once the read API has caught up
   * with any earlier send (one from a dead attempt, before this attempt was scheduled, or an ambiguous one in it).
   */
  private async lookUpUntilLagPassed(): Promise<LookupAnswer | undefined> {
    const { tool, ctx, deps } = this;
    if (!tool.lookup) return undefined;
    // Not only this attempt's scheduling time: an earlier attempt the server timed out (its heartbeats lost while
    // the server restarted) lives on in its worker and may send until this one starts. The lag counts from the
    // latest of the three (chaos seed 20261205, #211: a ticket committed 2.1 s before an empty lookup was trusted).
    const lastPossibleSendMs = Math.max(
      ctx.info.currentAttemptScheduledTimestampMs,
      this.startedAtMs,
      this.lastAmbiguousAtMs ?? 0,
    );
    const trustworthyAfter = lastPossibleSendMs + tool.readAfterWriteLagMs;
    for (;;) {
      const answer = await this.lookUpOnce(tool.lookup);
      if (answer.found) return answer;
      const wait = trustworthyAfter - deps.now();
      if (wait <= 0) return answer;
      ctx.log.info('lookup empty inside the read-after-write lag; waiting', { key: this.input.key, waitMs: wait });
      await withHeartbeat(ctx, () => deps.sleep(wait), this.heartbeatDetails);
    }
  }

  private async lookUpOnce(lookup: NonNullable<AnyTool['lookup']>): Promise<LookupAnswer> {
    const { tool, ctx, deps, requests } = this;
    deps.crash('before-lookup', tool.name);
    const request = requests.start('lookup');
    const askedAtMs = deps.now();
    let answer: LookupAnswer;
    try {
      answer = await withHeartbeat(
        ctx,
        () => withProviderSpan(tool.name, 'lookup', () => lookup(this.toolInput, this.toolCtx), lookupOutcome),
        this.heartbeatDetails,
      );
    } catch (err) {
      requests.answered(request, `lookup failed: ${(err as Error).message}`);
      deps.metrics.providerRequest(tool.name, 'lookup', 'failed', secondsSince(askedAtMs, deps.now));
      throw err;
    }
    requests.answered(request, answer.found ? `found ${answer.providerRef}` : 'not found');
    deps.metrics.providerRequest(tool.name, 'lookup', lookupOutcome(answer), secondsSince(askedAtMs, deps.now));
    return answer;
  }

  private async backoff(tries: number): Promise<void> {
    const cap = Math.min(TRANSIENT_BACKOFF.maxMs, TRANSIENT_BACKOFF.initialMs * 2 ** (tries - 1));
    const ms = Math.round(cap / 2 + (this.deps.random() * cap) / 2);
    await withHeartbeat(this.ctx, () => this.deps.sleep(ms), this.heartbeatDetails);
  }

  /** What every outcome and failure reports of the requests made. */
  private made(): { sends: number; requests: ExecuteOutcome['requests'] } {
    return { sends: this.requests.sends, requests: this.requests.details().requests };
  }
}
