/**
 * How a call to a provider's tool is made, for the executor and the lookup activity alike: what the tool is handed,
 * heartbeats (with the request log) while the call is in flight, the answer in the request log's words, and when a
 * key may have been forgotten.
 */
import type { Context } from '@temporalio/activity';
import { HEARTBEAT_INTERVAL_MS } from '../policies/timeouts';
import type { ToolContext } from '../policies/tool';
import type { LookupAnswer, ToolOutcome } from '../policies/tool-outcome';

/**
 * What a tool is handed. `details` is what every heartbeat carries (the executor's request log): a tool that
 * heartbeats itself must not replace it with nothing.
 */
export function toolContext(ctx: Context, key: string, details?: () => unknown): ToolContext {
  return {
    key,
    attempt: ctx.info.attempt,
    heartbeat: () => beat(ctx, details),
    signal: ctx.cancellationSignal,
    log: { info: (m, meta) => ctx.log.info(m, { key, ...meta }), warn: (m, meta) => ctx.log.warn(m, { key, ...meta }) },
  };
}

/**
 * Heartbeats while a slow call is in flight, so a dead worker is detected by heartbeat timeout. The
 * details (the request log) go with every heartbeat, so the next attempt knows what this one sent.
 */
export async function withHeartbeat<T>(ctx: Context, fn: () => Promise<T>, details?: () => unknown): Promise<T> {
  if (ctx.info.isLocal) return fn();
  beat(ctx, details);
  const timer = setInterval(() => beat(ctx, details), HEARTBEAT_INTERVAL_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * One heartbeat with the request log. A local activity (a run's act in its own workflow task) has none: the SDK keeps
 * its workflow task alive instead, and the server knows no such activity to beat for.
 */
export function beat(ctx: Context, details?: () => unknown): void {
  if (!ctx.info.isLocal) ctx.heartbeat(details?.());
}

/** A duration for a reason: hours with one decimal from an hour on, else seconds. */
export function readableDuration(ms: number): string {
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
