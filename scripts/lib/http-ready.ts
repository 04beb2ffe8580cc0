import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits until a throw-away server's `url` answers 2xx; stops it (`stop`) and throws with its last output when it
 * exits first or does not answer within `timeoutMs`.
 */
export async function waitForHttpReady(opts: {
  name: string;
  child: ChildProcess;
  url: string;
  output: () => string;
  stop: () => Promise<void>;
  timeoutMs: number;
  intervalMs?: number;
}): Promise<void> {
  const { name, child, url } = opts;
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await opts.stop();
      throw new Error(`${name} exited before it was ready:\n${opts.output().trim()}`);
    }
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await opts.stop();
      throw new Error(`${name} did not answer ${url} within ${opts.timeoutMs} ms:\n${opts.output().trim()}`);
    }
    await sleep(opts.intervalMs ?? 100);
  }
}
