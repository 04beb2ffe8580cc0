import type { Json } from './json';

/**
 * The closed set of answers a tool's `execute` gives. The executor's attempt-aware table
 * (activities/execute-action.ts) is the one place that decides what happens next; a tool only says
 * what it saw:
 *
 *   committed      the provider performed the effect (now or on an earlier attempt it recognised): done
 *   not-committed  the provider certainly did nothing (connection refused, 429, a status it documents so): safe
 *                  to retry
 *   rejected       the provider refused for good (declined, invalid, unauthorized, key reused): final
 *   ambiguous      the request may have arrived (reset after send, timeout, cut reply, 5xx): the table decides
 *                  between a resend with the key, a lookup, or `unknown`
 */
export type ToolOutcome =
  | {
      outcome: 'committed';
      /** The provider's ID of the effect (charge ID, message ID, row ID). */
      providerRef: string;
      /** What the provider answered, recorded with the action. */
      result?: Json;
      /** True only when the provider said it answered from its memory of the key (e.g. Idempotent-Replayed). */
      replayed?: boolean;
    }
  | { outcome: 'not-committed'; reason: string }
  | { outcome: 'rejected'; reason: RejectionReason; message: string; status?: number }
  | { outcome: 'ambiguous'; message: string };

/**
 * Why a provider refused: `declined` a business refusal (card declined, out of stock), `invalid` the
 * request itself, `unauthorized` our credentials, `conflict` the key was used for another request.
 */
export type RejectionReason = 'declined' | 'invalid' | 'unauthorized' | 'conflict';

/** What a lookup found. Throw instead when the provider could not be asked: that proves nothing. */
export type LookupAnswer =
  { found: true; providerRef: string; result?: Json; detail?: string } | { found: false; detail?: string };

/**
 * The effect exists at the provider, with its ID; `replayed` only when the provider said it returned an earlier result
 * for the key.
 */
export const committed = (providerRef: string, result?: Json, replayed = false): ToolOutcome => ({
  outcome: 'committed',
  providerRef,
  ...(result !== undefined ? { result } : {}),
  ...(replayed ? { replayed } : {}),
});
/**
 * Proof that nothing happened (a refused connection, 429, a status the provider documents so): retried inside the
 * attempt.
 */
export const notCommitted = (reason: string): Extract<ToolOutcome, { outcome: 'not-committed' }> => ({
  outcome: 'not-committed',
  reason,
});
/** The provider refused for good (declined, invalid, unauthorized, conflict): the action fails with a typed error. */
export const rejected = (
  reason: RejectionReason,
  message: string,
  status?: number,
): Extract<ToolOutcome, { outcome: 'rejected' }> => ({
  outcome: 'rejected',
  reason,
  message,
  ...(status !== undefined ? { status } : {}),
});
/**
 * The request may have reached the provider (reset, timeout, 5xx): the engine applies the tool's dedupe capability,
 * never a blind resend.
 */
export const ambiguous = (message: string): Extract<ToolOutcome, { outcome: 'ambiguous' }> => ({
  outcome: 'ambiguous',
  message,
});
/** A lookup's answer that the effect exists, with its ID. */
export const found = (providerRef: string, result?: Json, detail?: string): LookupAnswer => ({
  found: true,
  providerRef,
  ...(result !== undefined ? { result } : {}),
  ...(detail ? { detail } : {}),
});
/**
 * A lookup's answer that the provider has no effect for this key (only trusted after the tool's read-after-write lag).
 */
export const absent = (detail?: string): LookupAnswer => ({ found: false, ...(detail ? { detail } : {}) });

/**
 * What a provider documents about its error statuses: the ones that prove it did nothing. An error status proves
 * nothing by itself: a gateway answers 502 or 504 when the service behind it may have committed, and many services
 * answer 500 after a partial write. So only 429 (rejected by a rate limiter before any work) counts as "nothing
 * happened" unless the provider's documentation says more, e.g. that its 503 comes from a load shedder that runs
 * before the request is processed: `{ notCommittedStatuses: [503] }`.
 */
export interface StatusRules {
  /** Error statuses (besides 429) this provider documents as answered before anything was done. */
  notCommittedStatuses?: readonly number[];
}

/** The statuses that prove nothing was done, whatever the provider: a rate limiter's refusal. */
export const NOT_COMMITTED_STATUSES: readonly number[] = [429];

/**
 * The outcome an HTTP status means when the provider answered (the request arrived and was judged):
 *   2xx        committed (the caller supplies the reference)
 *   429        not committed; also any status the provider documents so (`rules.notCommittedStatuses`)
 *   5xx        ambiguous: the request may have committed behind the error (retried only with the key, a lookup,
 *              or not at all)
 *   409        rejected: a key conflict
 *   401, 403   rejected: unauthorized
 *   402, 404, 422  rejected: declined
 *   other 4xx  rejected: invalid
 */
export function outcomeOfStatus(
  status: number,
  message: string,
  rules: StatusRules = {},
): Exclude<ToolOutcome, { outcome: 'committed' }> | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (NOT_COMMITTED_STATUSES.includes(status) || (rules.notCommittedStatuses ?? []).includes(status)) {
    return { outcome: 'not-committed', reason: message };
  }
  if (status >= 500) return { outcome: 'ambiguous', message: `${message} (the request may have committed)` };
  if (status === 409) return { outcome: 'rejected', reason: 'conflict', message, status };
  if (status === 401 || status === 403) return { outcome: 'rejected', reason: 'unauthorized', message, status };
  if (status === 402 || status === 404 || status === 422)
    return { outcome: 'rejected', reason: 'declined', message, status };
  return { outcome: 'rejected', reason: 'invalid', message, status };
}
