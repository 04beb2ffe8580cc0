import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startSandboxProviders, type ProviderKind, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { sandboxUrlsToEnv } from '../../examples/sandbox-env';
import type { Stack } from '../lib/stack';

/**
 * A lane runs one iteration at a time. Faults strike "the next matching request" at a provider, whoever
 * sends it, so iterations in flight together must not share a faulted provider: every lane but the first
 * gets its own process of each faulted kind (the first uses the stack's). Kinds nobody faults are shared.
 */
export interface Lane {
  index: number;
  providers: Record<ProviderKind, SandboxProvider>;
  /** Worker environment pointing at this lane's providers. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const ALL_KINDS: readonly ProviderKind[] = ['payments', 'email', 'tickets', 'inventory', 'shipping'];
/** Five cold tsx starts per lane compete for CPU on a small machine. */
const PROVIDER_START_TIMEOUT_MS = 60_000;

export async function startLanes(
  stack: Stack,
  count: number,
  faultedKinds: readonly ProviderKind[],
  logDir: string,
): Promise<Lane[]> {
  const shared = stack.providers;
  const laneOf = (
    index: number,
    own: Partial<Record<ProviderKind, SandboxProvider>>,
    stop: () => Promise<void>,
  ): Lane => {
    const providers = Object.fromEntries(ALL_KINDS.map((k) => [k, own[k] ?? shared[k]])) as Record<
      ProviderKind,
      SandboxProvider
    >;
    const missing = ALL_KINDS.filter((k) => !providers[k]);
    if (missing.length) throw new Error(`the stack runs no ${missing.join(', ')} provider; start it with all kinds`);
    const urls = Object.fromEntries(ALL_KINDS.map((k) => [k, providers[k].url])) as Record<ProviderKind, string>;
    return { index, providers, env: sandboxUrlsToEnv(urls), stop };
  };
  const lanes: Lane[] = [laneOf(0, {}, async () => undefined)];
  try {
    const started = await Promise.all(
      Array.from({ length: count - 1 }, async (_, i) => {
        const dir = path.join(logDir, `lane-${i + 1}`);
        await mkdir(dir, { recursive: true });
        return startSandboxProviders(faultedKinds, { logDir: dir, startTimeoutMs: PROVIDER_START_TIMEOUT_MS });
      }),
    );
    for (const [i, own] of started.entries()) {
      await Promise.all(faultedKinds.map((k) => own[k].configure(stack.webhookConfig(k))));
      lanes.push(laneOf(i + 1, own, () => own.stopAll()));
    }
  } catch (err) {
    await Promise.all(lanes.map((l) => l.stop()));
    throw err;
  }
  return lanes;
}

/**
 * Puts a lane's providers back to a known state before an iteration: no faults. Kinds no scenario faults
 * are shared between lanes and never armed, so clearing them too is harmless.
 */
export async function resetLaneFaults(lane: Lane): Promise<void> {
  await Promise.all(ALL_KINDS.map((k) => lane.providers[k].clearFaults()));
}
