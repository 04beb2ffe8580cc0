import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { z } from 'zod';
import { ChargeInput } from '../tools/schemas';
import {
  HEARTBEAT_INTERVAL_MS,
  PROVIDER_REQUEST_TIMEOUT_MS,
  errorCodeFromBody,
  firstIssue,
  providerRequest,
} from 'retrysafe';
import type { CrashHook } from 'retrysafe/testing';

/**
 * The baseline the chaos harness and the benchmark compare retrysafe with: a bare Temporal activity that
 * charges through the same payments provider the way a naive client does. Its definition:
 *   - a fresh random Idempotency-Key per attempt (the provider requires one; the client does not persist it,
 *     so a retried attempt cannot be recognised as the same charge);
 *   - no reconciliation: a lost reply, a crash or a timeout is simply retried by Temporal's retry policy;
 *   - 4xx answers (a declined card) fail without retry, everything else is thrown and retried.
 * It honours the same RETRYSAFE_CRASH_AT points as the retrysafe executor (operation `charge`), so both
 * die at the same places under the same seed.
 */
export const BareChargeInput = ChargeInput;
export type BareChargeInput = z.infer<typeof BareChargeInput>;

export interface BareChargeResult {
  chargeId: string;
  /** The activity attempt that got the answer; above 1 means earlier attempts died or failed. */
  attempt: number;
}

export interface BareChargeDeps {
  paymentsUrl: string;
  crash: CrashHook;
  newKey?: () => string;
}

export function createBareCharge(deps: BareChargeDeps) {
  const newKey = deps.newKey ?? randomUUID;
  return async function bareCharge(raw: BareChargeInput): Promise<BareChargeResult> {
    const parsed = BareChargeInput.safeParse(raw);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      throw ApplicationFailure.nonRetryable(`bareCharge: ${field}: ${message}`, 'InvalidIntent');
    }
    const ctx = Context.current();
    const key = `bare-${newKey()}`;
    deps.crash('before-send', 'charge');
    // Heartbeats while the provider holds the request, so the baseline is killed by crashes, not by its own timeout.
    // As a local activity (the fastest shape) it has no heartbeat: its workflow task is kept alive by the SDK.
    const beat = () => {
      if (!ctx.info.isLocal) ctx.heartbeat();
    };
    const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
    let res;
    try {
      beat();
      res = await providerRequest({
        baseUrl: deps.paymentsUrl,
        method: 'POST',
        path: '/v1/charges',
        body: parsed.data,
        idempotencyKey: key,
        timeoutMs: PROVIDER_REQUEST_TIMEOUT_MS,
        signal: ctx.cancellationSignal,
      });
    } finally {
      clearInterval(timer);
    }
    deps.crash('after-commit', 'charge');
    if (res.status >= 200 && res.status < 300) {
      return { chargeId: String((res.body as { id?: unknown }).id), attempt: ctx.info.attempt };
    }
    const code = errorCodeFromBody(res.body) ?? `http_${res.status}`;
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      throw ApplicationFailure.nonRetryable(`payments answered ${res.status} ${code}`, 'BusinessRejected');
    }
    throw ApplicationFailure.retryable(`payments answered ${res.status} ${code}`, 'TransientProviderError');
  };
}
