import type { RetrysafeClient } from '../../client';
import type { EffectStatus } from '../../policies/effect-status';
import type { EffectSnapshot } from '../../workflows/effect-api';

export interface WaitOptions {
  /** Default 30 s. */
  timeoutMs?: number;
  /** Default 200 ms. */
  intervalMs?: number;
}

/**
 * Polls an action until it reaches one of `statuses` and returns that snapshot. On timeout the error
 * carries the last snapshot (status, checks, audit) or the last error, so a failure says where the action
 * stood, not just that it was late.
 */
export async function waitForStatus(
  retrysafe: RetrysafeClient,
  key: string,
  statuses: EffectStatus | readonly EffectStatus[],
  opts: WaitOptions = {},
): Promise<EffectSnapshot> {
  const wanted: readonly EffectStatus[] = typeof statuses === 'string' ? [statuses] : statuses;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last: EffectSnapshot | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await retrysafe.getAction(key);
      lastError = undefined;
      if (last && wanted.includes(last.status)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await sleep(opts.intervalMs ?? 200);
  }
  const seen = last ? JSON.stringify(last, null, 2) : 'no such action';
  const error = lastError ? `\nlast error: ${(lastError as Error).message ?? String(lastError)}` : '';
  throw new Error(`action ${key} did not reach ${wanted.join(' | ')} within ${timeoutMs} ms; last snapshot: ${seen}${error}`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
