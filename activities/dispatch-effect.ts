import { Context, ApplicationFailure } from '@temporalio/activity';
import type { Intent } from '../policies/intents';
import { contractFor } from '../policies/tool-contracts';
import { RetrysafeError } from '../policies/errors';
import { HEARTBEAT_INTERVAL_MS, PROVIDER_REQUEST_TIMEOUT_MS, TRANSIENT_BACKOFF } from '../policies/timeouts';
import type { CrashHook } from './crash-points';
import type { ProviderResponse, ProviderUrls } from './providers';
import { ROUTES, ProviderTransportError, errorCodeFromBody, errorMessageFromBody, providerRequest } from './providers';

/**
 * The act executor: one narrow path from a persisted intent to its provider, with the action's key.
 *
 *   attempt 1 ─▶ send ─▶ confirmed
 *   attempt N>1 (the previous attempt died and may have reached the provider):
 *     idempotency-key ─▶ send again with the same key (the provider replays the original)
 *     lookup          ─▶ look up; found ─▶ confirmed; empty inside the lag window ─▶ wait, look again;
 *                        reliably absent ─▶ send
 *     none            ─▶ unknown, nothing sent
 *   429 / 5xx / refused connection: retried here with jittered backoff (nothing was committed)
 *   reset / dropped reply / timeout: the request may have committed; key ─▶ resend, lookup ─▶ look up, none ─▶ unknown
 *   decline, validation, authorization: typed non-retryable failures
 */
export interface DispatchInput {
  key: string;
  intent: Intent;
  requestHash: string;
  /**
   * `first` when no earlier dispatch of this action can have reached the provider; `maybe-sent` when
   * an earlier dispatch may have (reconciliation proved absence): then the contract's rules for retries
   * apply from the first attempt; `operator-cleared` when an authorized operator established that the
   * earlier dispatch did not happen: the first attempt sends, even on a provider with no key.
   */
  mode: 'first' | 'maybe-sent' | 'operator-cleared';
}

export type DispatchOutcome =
  | { status: 'confirmed'; providerRef: string; record: unknown; via: 'send' | 'replay' | 'lookup'; sends: number }
  | { status: 'unknown'; reason: string; sends: number };

export interface DispatchDeps {
  providerUrls: ProviderUrls;
  crash: CrashHook;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

type Attempt = { state: 'not-sent' | 'maybe-sent'; sends: number; lastError?: string; lastAmbiguousAtMs?: number };

export function createDispatchEffect(deps: DispatchDeps) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = deps.random ?? Math.random;
  const now = deps.now ?? Date.now;

  return async function dispatchEffect(input: DispatchInput): Promise<DispatchOutcome> {
    const ctx = Context.current();
    const { intent, key } = input;
    const contract = contractFor(intent.operation);
    const route = ROUTES[intent.operation] as (typeof ROUTES)[keyof typeof ROUTES];
    const baseUrl = deps.providerUrls[contract.provider];
    const attempt: Attempt = {
      // An operator's clearance counts only for the first attempt: if that attempt dies, the rules apply again.
      state: ctx.info.attempt > 1 || input.mode === 'maybe-sent' ? 'maybe-sent' : 'not-sent',
      sends: 0,
    };
    const log = ctx.log;
    log.info('dispatch', { key, operation: intent.operation, attempt: ctx.info.attempt, state: attempt.state });

    const call = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      withHeartbeat(ctx, () =>
        providerRequest({
          baseUrl,
          method,
          path,
          body,
          idempotencyKey: method === 'POST' && route.sendsKey ? key : undefined,
          timeoutMs: PROVIDER_REQUEST_TIMEOUT_MS,
          signal: ctx.cancellationSignal,
        }),
      );

    for (let tries = 0; ; tries++) {
      if (tries >= TRANSIENT_BACKOFF.maxTries) {
        if (attempt.state === 'maybe-sent' && contract.dedupe !== 'idempotency-key') {
          return { status: 'unknown', reason: `retries exhausted after an ambiguous failure: ${attempt.lastError}`, sends: attempt.sends };
        }
        if (attempt.state === 'maybe-sent') {
          return { status: 'unknown', reason: `provider unreachable after a possibly committed request: ${attempt.lastError}`, sends: attempt.sends };
        }
        throw ApplicationFailure.create({
          type: 'TransientProviderError',
          message: `${contract.provider} unavailable after ${tries} tries; nothing was committed: ${attempt.lastError}`,
          nonRetryable: true,
        });
      }
      if (tries > 0) await backoff(tries);

      try {
        if (attempt.state === 'maybe-sent') {
          if (contract.dedupe === 'none') {
            return { status: 'unknown', reason: 'an earlier attempt may have reached a provider with no key and no lookup', sends: attempt.sends };
          }
          if (contract.dedupe === 'lookup') {
            const found = await lookUpUntilLagPassed();
            if (found) return { status: 'confirmed', providerRef: refOf(found), record: found, via: 'lookup', sends: attempt.sends };
            log.info('lookup proved absence; sending', { key });
          }
        }
        deps.crash('before-send', intent.operation);
        attempt.sends++;
        const res = await call('POST', route.sendPath, route.body(intent as never, key));
        deps.crash('after-commit', intent.operation);
        if (res.status >= 200 && res.status < 300) {
          const replayed = res.headers.get('idempotent-replayed') === 'true' || res.status === 200;
          return { status: 'confirmed', providerRef: refOf(res.body), record: res.body, via: replayed ? 'replay' : 'send', sends: attempt.sends };
        }
        rejectOrRetry(res);
        attempt.lastError = `HTTP ${res.status} ${errorCodeFromBody(res.body) ?? ''}`.trim();
      } catch (err) {
        if (err instanceof ProviderTransportError) {
          attempt.lastError = err.message;
          if (err.certainty === 'ambiguous') {
            attempt.state = 'maybe-sent';
            attempt.lastAmbiguousAtMs = now();
          }
          log.warn('provider transport failure', { key, certainty: err.certainty, error: err.message });
          continue;
        }
        throw err;
      }
    }

    async function lookUpUntilLagPassed(): Promise<unknown | undefined> {
      const lookupPath = route.lookupPath?.(intent as never, key);
      if (!lookupPath) return undefined;
      // An empty answer proves absence only once the read API has caught up with any earlier send: one from
      // a dead attempt (before this attempt was scheduled) or an ambiguous one in this attempt.
      const lastPossibleSendMs = Math.max(ctx.info.currentAttemptScheduledTimestampMs, attempt.lastAmbiguousAtMs ?? 0);
      const trustworthyAfter = lastPossibleSendMs + contract.readAfterWriteLagMs;
      for (;;) {
        deps.crash('before-lookup', intent.operation);
        const res = await call('GET', lookupPath);
        if (res.status !== 200) {
          rejectOrRetry(res);
          throw new ProviderTransportError('not-sent', `lookup answered HTTP ${res.status}`);
        }
        const data = (res.body as { data?: unknown[] }).data ?? [];
        if (data.length > 0) return data[0];
        const wait = trustworthyAfter - now();
        if (wait <= 0) return undefined;
        log.info('lookup empty inside the read-after-write lag; waiting', { key, waitMs: wait });
        await withHeartbeat(ctx, () => sleep(wait));
      }
    }

    async function backoff(tries: number) {
      const cap = Math.min(TRANSIENT_BACKOFF.maxMs, TRANSIENT_BACKOFF.initialMs * 2 ** (tries - 1));
      await withHeartbeat(ctx, () => sleep(Math.round(cap / 2 + (random() * cap) / 2)));
    }

    function rejectOrRetry(res: ProviderResponse): void {
      const code = errorCodeFromBody(res.body) ?? `http_${res.status}`;
      const message = `${contract.provider} answered ${res.status} ${code}${errorMessageFromBody(res.body) ? `: ${errorMessageFromBody(res.body)}` : ''}`;
      const details = { key, status: res.status, code };
      if (res.status === 429 || res.status >= 500) return; // transient: retried with backoff
      if (res.status === 409) throw new RetrysafeError('IntentMismatch', `${message} (the key was used for another request)`, details).toFailure();
      if (res.status === 401 || res.status === 403) throw new RetrysafeError('AuthorizationRejected', message, details).toFailure();
      if (res.status === 402 || res.status === 422 || res.status === 404) throw new RetrysafeError('BusinessRejected', message, details).toFailure();
      throw new RetrysafeError('ProviderValidationRejected', message, details).toFailure();
    }
  };
}

function refOf(record: unknown): string {
  const id = (record as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || !id) {
    throw new RetrysafeError('ProviderValidationRejected', 'provider reply carries no id', { record }).toFailure();
  }
  return id;
}

/** Heartbeats while a slow call is in flight, so a dead worker is detected by heartbeat timeout. */
async function withHeartbeat<T>(ctx: Context, fn: () => Promise<T>): Promise<T> {
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
