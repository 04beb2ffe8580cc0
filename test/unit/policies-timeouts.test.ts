import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Duration } from '@temporalio/common';
import {
  CLAIM_RETRY,
  DISPATCH_HEARTBEAT_TIMEOUT,
  DISPATCH_RETRY,
  DISPATCH_SCHEDULE_TO_CLOSE,
  DISPATCH_START_TO_CLOSE,
  HEARTBEAT_INTERVAL_MS,
  MAX_REDISPATCHES,
  PROVIDER_REQUEST_TIMEOUT_MS,
  RECONCILE_INTERVAL,
  RECONCILE_MAX_CHECKS,
  TRANSIENT_BACKOFF,
} from '../../policies/timeouts';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../../policies/errors';

/** Reads the duration strings these constants use ('200ms', '2s', '5m', '24h', '7d') or a number of ms. */
function ms(d: Duration | undefined): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(String(d));
  assert.ok(m, `unreadable duration ${String(d)}`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

/** Codes a dispatch attempt can end with that must never be retried by Temporal. */
const DISPATCH_FINAL_CODES: ErrorCode[] = [
  'IntentMismatch',
  'InvalidIntent',
  'BusinessRejected',
  'AuthorizationRejected',
  'ProviderValidationRejected',
  'OutcomeUnknown',
  'CeilingReached',
];

describe('DISPATCH_RETRY', () => {
  const types = DISPATCH_RETRY.nonRetryableErrorTypes ?? [];

  it('does not retry the non-retryable codes a dispatch can end with', () => {
    for (const code of DISPATCH_FINAL_CODES) {
      assert.equal(ERROR_CODES[code].retryable, false, `${code} should be non-retryable in ERROR_CODES`);
      assert.ok(types.includes(code), `${code} missing from DISPATCH_RETRY.nonRetryableErrorTypes`);
    }
  });

  it('does not list TransientProviderError: a dead attempt that was transient may be retried', () => {
    assert.equal(types.includes('TransientProviderError'), false);
  });

  it('lists only known, non-retryable error codes (no typos)', () => {
    for (const t of types) {
      assert.ok(isErrorCode(t), `${t} is not an error code`);
      assert.equal(ERROR_CODES[t].retryable, false, t);
    }
  });

  it('is bounded: a finite number of attempts and a capped interval', () => {
    assert.ok(DISPATCH_RETRY.maximumAttempts !== undefined && DISPATCH_RETRY.maximumAttempts > 1);
    assert.ok(ms(DISPATCH_RETRY.maximumInterval) <= ms(DISPATCH_SCHEDULE_TO_CLOSE));
    assert.ok((DISPATCH_RETRY.backoffCoefficient ?? 2) > 1);
  });
});

describe('CLAIM_RETRY', () => {
  it('does not retry intent and key errors', () => {
    const types = CLAIM_RETRY.nonRetryableErrorTypes ?? [];
    for (const code of [
      'IntentMismatch',
      'InvalidIntent',
      'InvalidActionKey',
      'UnknownOperation',
      'PayloadTooLarge',
    ] as const) {
      assert.ok(types.includes(code), code);
    }
    for (const t of types) assert.ok(isErrorCode(t) && !ERROR_CODES[t].retryable, t);
  });
});

describe('dispatch timing', () => {
  it('heartbeats several times within the heartbeat timeout', () => {
    assert.ok(HEARTBEAT_INTERVAL_MS * 2 <= ms(DISPATCH_HEARTBEAT_TIMEOUT));
  });

  it('notices a dead worker within seconds, not minutes', () => {
    assert.ok(ms(DISPATCH_HEARTBEAT_TIMEOUT) <= 10_000);
  });

  it('orders heartbeat < start-to-close < schedule-to-close', () => {
    assert.ok(ms(DISPATCH_HEARTBEAT_TIMEOUT) < ms(DISPATCH_START_TO_CLOSE));
    assert.ok(ms(DISPATCH_START_TO_CLOSE) < ms(DISPATCH_SCHEDULE_TO_CLOSE));
  });

  it('fits every in-attempt transient retry inside one start-to-close window', () => {
    let backoff = 0;
    for (let tries = 1; tries < TRANSIENT_BACKOFF.maxTries; tries++) {
      backoff += Math.min(TRANSIENT_BACKOFF.maxMs, TRANSIENT_BACKOFF.initialMs * 2 ** (tries - 1));
    }
    const worstCase = TRANSIENT_BACKOFF.maxTries * PROVIDER_REQUEST_TIMEOUT_MS + backoff;
    assert.ok(worstCase < ms(DISPATCH_START_TO_CLOSE), `${worstCase} ms`);
  });

  it('bounds reconciliation and redispatching', () => {
    assert.ok(Number.isInteger(RECONCILE_MAX_CHECKS) && RECONCILE_MAX_CHECKS > 0);
    assert.ok(ms(RECONCILE_INTERVAL) > 0);
    assert.ok(Number.isInteger(MAX_REDISPATCHES) && MAX_REDISPATCHES > 0);
  });
});
