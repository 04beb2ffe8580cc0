import type { RetrysafeClient } from '../../client';
import type { ActionSnapshot } from '../../messages/action';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls an action until its status is one of `statuses`. On timeout the error carries the last
 * snapshot's status and audit trail, which is what a failing test needs to explain itself.
 */
export async function waitForStatus(
  retrysafe: RetrysafeClient,
  key: string,
  statuses: string | readonly string[],
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<ActionSnapshot> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last: ActionSnapshot | undefined;
  while (Date.now() < deadline) {
    try {
      last = await retrysafe.getAction(key);
    } catch {
      last = undefined; // not claimed yet, or a query racing the workflow's first task
    }
    if (last && (typeof statuses === 'string' ? [statuses] : statuses).includes(last.status)) return last;
    await sleep(opts.intervalMs ?? 250);
  }
  const trail = last?.audit.map((a) => `${a.from ?? '∅'}→${a.to}: ${a.reason}`).join('\n  ') ?? '(never seen)';
  throw new Error(
    `action ${key} did not reach ${[statuses].flat().join('|')} within ${opts.timeoutMs ?? 60_000} ms; last status ${last?.status ?? 'none'}:\n  ${trail}`,
  );
}

/**
 * Polls until `check` holds, every `intervalMs`; the error names what was awaited. Use it instead of a fixed sleep
 * whenever the test waits for something to happen: it returns as soon as it has, and fails clearly if it never does.
 */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
