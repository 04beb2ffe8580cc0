import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { WorkerProcess } from '../lib/worker-process';
import { signalWorker } from './faults';
import type { CrashMode, CrashRecord, IterationPlan } from './types';

/** An armed point is normally reached within a second or two; past this the plan missed it. */
const ARMED_WAIT_MS = 45_000;
/** The first commit usually lands within a second; transient faults before it add a few backoffs. */
const INFLIGHT_WAIT_MS = 30_000;

/** Modes the worker reaches itself: its crash hook (RETRYSAFE_CRASH_AT) kills it there. */
const ARMED_MODES: readonly CrashMode[] = [
  'before-send',
  'after-commit',
  'before-lookup',
  'after-row-claimed',
  'before-row-settles',
  'after-row-settled',
];

/** RETRYSAFE_CRASH_AT for the doomed worker, when the worker is to kill itself at a point. */
export function crashSpecFor(plan: IterationPlan): string | undefined {
  const { mode } = plan.crash;
  // The gateway's error is the reply the worker dies after.
  if (mode === 'gateway-error') return `after-commit:${plan.operation}`;
  if (mode === 'stalled-owner') return `stall:after-row-claimed:${plan.operation}`;
  return ARMED_MODES.includes(mode) ? `${mode}:${plan.operation}` : undefined;
}

export interface CrashInput {
  plan: IterationPlan;
  doomed: WorkerProcess;
  /** The lane's provider the plan's operation reaches; absent on a real server, where no in-flight point is planned. */
  provider?: SandboxProvider;
  /** Settles when the work is done; an armed point not reached by then never will be. */
  settled: Promise<void>;
  startedAtMs: number;
  /** Called the moment the point is reached (`--target cluster` kills a service there); not awaited. */
  atPoint?: () => void;
  /** Leave the worker running: the point's other kill (a cluster service) is the iteration's crash. */
  spareWorker?: boolean;
}

/**
 * Ends the doomed worker with exactly one SIGKILL, at the plan's point: the worker's own crash hook for
 * armed points, the harness once the provider holds a committed reply (in-flight), or the harness after a
 * seeded delay (random-time). If an armed point is never reached the harness kills the worker anyway and
 * says so, so every iteration costs exactly one real SIGKILL. With `spareWorker` (only for the points the harness
 * reaches itself) the worker lives on, and `atPoint` carries out the iteration's kill instead.
 */
export async function inflictCrash(input: CrashInput): Promise<CrashRecord> {
  const { plan, doomed } = input;
  let pointReached = true;
  let killedAtMs: number | undefined;
  if (plan.crash.mode === 'stalled-owner') {
    pointReached = await stallThenContinue(input);
  } else if (crashSpecFor(plan)) {
    const abort = new AbortController();
    const first = await Promise.race([
      doomed.exited.then(() => 'crashed' as const),
      input.settled.then(
        () => 'settled' as const,
        () => 'settled' as const,
      ),
      sleep(ARMED_WAIT_MS, 'timeout' as const, { signal: abort.signal }).catch(() => 'timeout' as const),
    ]);
    abort.abort();
    pointReached = first === 'crashed';
    if (pointReached) {
      killedAtMs = Date.now() - input.startedAtMs;
      input.atPoint?.();
    }
  } else if (plan.crash.mode === 'in-flight') {
    if (!input.provider) throw new Error('an in-flight crash needs a sandbox provider that holds the reply');
    try {
      await input.provider.waitForInflight((s) => s.committedButUnanswered >= 1, INFLIGHT_WAIT_MS);
    } catch {
      pointReached = false;
    }
  } else {
    await sleep(plan.crash.delayMs ?? 0);
  }
  if (killedAtMs === undefined) {
    killedAtMs = Date.now() - input.startedAtMs;
    // An armed point that was missed gets its cluster kill with the harness's kill of the worker.
    input.atPoint?.();
  }
  if (input.spareWorker && !crashSpecFor(plan)) {
    return { mode: plan.crash.mode, pid: doomed.pid, signal: null, pointReached, atMs: killedAtMs, workerSpared: true };
  }
  if (doomed.alive()) await doomed.kill('SIGKILL');
  const exit = await doomed.exited;
  return { mode: plan.crash.mode, pid: doomed.pid, signal: exit.signal, pointReached, atMs: killedAtMs };
}

/** How long a continued owner runs (into the row's fence) before the harness kills it. */
const RUN_ON_AFTER_CONTINUE_MS = 2_000;

/**
 * The stalled owner: waits for the worker to stop itself at the point, keeps it stopped for the plan's stall (another
 * worker's attempt takes the row over meanwhile), continues it and lets it run on; the caller then kills it. False when
 * the worker never stopped (the point was missed).
 */
async function stallThenContinue(input: CrashInput): Promise<boolean> {
  const { doomed } = input;
  let settled = false;
  const markSettled = () => (settled = true);
  input.settled.then(markSettled, markSettled);
  const deadline = Date.now() + ARMED_WAIT_MS;
  while (!(await stopped(doomed.pid))) {
    if (settled || !doomed.alive() || Date.now() > deadline) return false;
    await sleep(20);
  }
  input.atPoint?.();
  await sleep(input.plan.crash.stallMs ?? 0);
  // A stopped worker ends only by a signal; one that did while stalled has nothing to continue, and its exit (signal
  // and all) is what the crash record then reports.
  if (signalWorker(doomed, 'SIGCONT')) await sleep(RUN_ON_AFTER_CONTINUE_MS);
  return true;
}

/** Whether the process is stopped (its state in /proc is T). */
async function stopped(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  } catch {
    return false;
  }
}
