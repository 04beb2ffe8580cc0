import { setTimeout as sleep } from 'node:timers/promises';
import { msToNumber } from '@temporalio/common/lib/time';
import { DISPATCH_START_TO_CLOSE } from '../../policies/timeouts';
import type { ProviderKind, SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { UsageError } from '../../cli/ops/errors';
import type { Stack } from '../lib/stack';
import {
  RESET_AFTER_COMMIT,
  replyWithheld,
  type Toxic,
  type ToxicProxy,
  type ToxiproxyServer,
} from '../lib/toxiproxy-server';
import type { WorkerProcess } from '../lib/worker-process';
import type { Lane } from './lanes';
import { createRng, deriveSeed, type Rng } from './prng';
import { FAULT_KINDS, type FaultKind, type FaultPlan, type FaultRecord, type IterationPlan } from './types';

export { FAULT_KINDS };
export type { FaultKind, FaultPlan, FaultRecord };

/** Kinds the harness cannot inject properly yet, and what is missing for each. */
export const REFUSED: Partial<Record<FaultKind, string>> = {};

/**
 * Kinds that go through toxiproxy: the run starts one, and each lane's workers reach providers, Temporal and (on
 * PostgreSQL) the ledger by it.
 */
const NETWORK_KINDS: readonly FaultKind[] = [
  'provider-reset',
  'provider-timeout',
  'temporal-partition',
  'ledger-partition',
];

/** Kinds that need the run's ledger on PostgreSQL (a network path to cut), not a SQLite file. */
export const needsPostgresLedger = (kinds: readonly FaultKind[]) => kinds.includes('ledger-partition');

/** The held reply gives each fault its moment: long enough for a server restart to happen inside it. */
const HOLD_MS: Record<string, readonly [number, number]> = {
  'server-restart': [3_000, 6_000],
  default: [1_000, 2_500],
};
/**
 * A run's act holds the row for the dispatch's start-to-close timeout and 5 s more (its lease): a paused worker stays
 * stopped past that, so another worker's attempt takes the row first.
 */
const ROW_LEASE_MS = msToNumber(DISPATCH_START_TO_CLOSE) + 5_000;
const PAUSE_PAST_LEASE_MS: readonly [number, number] = [1_000, 4_000];
const WITHHELD_MS: readonly [number, number] = [1_000, 4_000];
const PARTITION_MS: readonly [number, number] = [2_000, 8_000];
/**
 * A skewed successor's lease clock runs ahead by a whole lease and up to 10 s more: every lease it reads has ended by
 * its clock while the holder, live, still sends under it.
 */
const SKEW_MS: readonly [number, number] = [ROW_LEASE_MS, ROW_LEASE_MS + 10_000];
/** How long the provider's commit may take to come (transient faults of the scenario, approvals, compensation). */
const POINT_WAIT_MS = 45_000;
/** From the provider's reply leaving to its bytes reaching the toxic on loopback, with room for a loaded machine. */
const TOXIC_MARGIN_MS = 250;
/** Between looks at the provider's request log while some other reply is passing. */
const HELD_POLL_MS = 20;

/** `--faults` as given: a comma-separated list or `all`; refused kinds named with what they lack. */
export function parseFaultKinds(values: readonly string[]): FaultKind[] {
  const names = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const all = names.includes('all');
  const kinds = all ? FAULT_KINDS.filter((k) => !REFUSED[k]) : names;
  const out: FaultKind[] = [];
  for (const name of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(name)) {
      throw new UsageError(
        `--faults: unknown fault kind ${JSON.stringify(name)}; available: ${FAULT_KINDS.join(', ')}, all`,
      );
    }
    const refused = REFUSED[name as FaultKind];
    if (refused) throw new UsageError(`--faults: ${name} is not supported: ${refused}`);
    if (!out.includes(name as FaultKind)) out.push(name as FaultKind);
  }
  if (out.length === 0) throw new UsageError('--faults: needs a fault kind, or all');
  return out;
}

/** Whether the kind ends the worker with the plan's own crash (the harness's crash modes). */
export const killsWorker = (kind: FaultKind | undefined) => kind === undefined || kind === 'worker-kill';

export const needsToxiproxy = (kinds: readonly FaultKind[]) => kinds.some((k) => NETWORK_KINDS.includes(k));

/**
 * The iteration's fault, from its own stream (the seed's, salted), so the plan's other draws stay as they were: a
 * worker-kill iteration is the plan as drawn without --faults; any other kind replaces the plan's crash and faults
 * with one held reply at the provider, the fault's moment. The kinds are dealt, not drawn one by one: every block of
 * `kinds.length` iterations takes each kind once, in an order the seed draws for that block, so a run of N iterations
 * gives every kind N / kinds.length of them (give or take one) and a short run still covers them all.
 */
export function withFault(plan: IterationPlan, seed: number, kinds: readonly FaultKind[]): IterationPlan {
  const rng = createRng(deriveSeed(seed, plan.index, 0xfa17));
  const kind = dealtKind(seed, plan.index, kinds);
  if (kind === 'worker-kill') return { ...plan, fault: { kind } };
  const holdMs = rng.int(...(HOLD_MS[kind] ?? HOLD_MS.default));
  const fault: FaultPlan = { kind, holdMs, ...durationOf(kind, rng) };
  const hold = plan.providerOp
    ? [{ op: plan.providerOp, kind: 'hold-after-commit' as const, delayMs: holdMs, times: 1 }]
    : [];
  // On the cluster a worker-kill also kills one of its services at the crash point (the plan's clusterFault); the
  // other kinds are the iteration's one fault, and strike the cluster through their own means (the frontend's proxy,
  // a restart of its services), so no service kill is planned beside them.
  const { clusterFault: _killAtCrashPoint, ...withoutServiceKill } = plan;
  return { ...withoutServiceKill, fault, faults: hold, declined: false, serverRestart: kind === 'server-restart' };
}

/** The kind iteration `index` is dealt: its place in its block's order, a shuffle of `kinds` drawn by the seed. */
export function dealtKind(seed: number, index: number, kinds: readonly FaultKind[]): FaultKind {
  if (kinds.length === 0) throw new Error('no fault kind to deal');
  const block = Math.floor(index / kinds.length);
  const rng = createRng(deriveSeed(seed, block, 0xdea1));
  const order = [...kinds];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order[index % kinds.length];
}

function durationOf(kind: FaultKind, rng: Rng): Pick<FaultPlan, 'durationMs' | 'skewMs'> {
  if (kind === 'worker-pause') return { durationMs: ROW_LEASE_MS + rng.int(...PAUSE_PAST_LEASE_MS) };
  if (kind === 'temporal-partition' || kind === 'ledger-partition') return { durationMs: rng.int(...PARTITION_MS) };
  if (kind === 'clock-skew') return { skewMs: rng.int(...SKEW_MS) };
  if (kind === 'provider-timeout') return { durationMs: rng.int(...WITHHELD_MS) };
  return {};
}

export function describeFault(f: FaultPlan): string {
  return `${f.kind}${f.durationMs ? ` ${f.durationMs}ms` : ''}${f.skewMs ? ` +${f.skewMs}ms` : ''}`;
}

/**
 * A lane's proxies: one per provider kind, one to the Temporal frontend and, when the run's ledger is on PostgreSQL,
 * one to it; its workers reach them instead.
 */
export interface LaneProxies {
  providers: Partial<Record<ProviderKind, ToxicProxy>>;
  temporal: ToxicProxy;
  ledger?: ToxicProxy;
}

/** Puts toxiproxy between every lane's workers and its providers and Temporal (the lane's env points at the proxies). */
export async function proxyLanes(
  toxiproxy: ToxiproxyServer,
  stack: Stack,
  lanes: readonly Lane[],
): Promise<Map<number, LaneProxies>> {
  const byLane = new Map<number, LaneProxies>();
  for (const lane of lanes) {
    const providers: LaneProxies['providers'] = {};
    for (const [kind, provider] of Object.entries(lane.providers) as Array<[ProviderKind, SandboxProvider]>) {
      const proxy = await toxiproxy.proxy(`lane-${lane.index}-${kind}`, new URL(provider.url).host);
      providers[kind] = proxy;
      lane.env[`RETRYSAFE_${kind.toUpperCase()}_URL`] = `http://${proxy.host}:${proxy.port}`;
    }
    const temporal = await toxiproxy.proxy(`lane-${lane.index}-temporal`, stack.server.address);
    lane.env.TEMPORAL_ADDRESS = `${temporal.host}:${temporal.port}`;
    const ledgerUrl = stack.workerEnv.RETRYSAFE_LEDGER?.startsWith('postgres') ? stack.workerEnv.RETRYSAFE_LEDGER : '';
    let ledger: ToxicProxy | undefined;
    if (ledgerUrl) {
      const url = new URL(ledgerUrl);
      ledger = await toxiproxy.proxy(`lane-${lane.index}-ledger`, url.host);
      url.host = `${ledger.host}:${ledger.port}`;
      lane.env.RETRYSAFE_LEDGER = url.toString();
    }
    byLane.set(lane.index, { providers, temporal, ...(ledger ? { ledger } : {}) });
  }
  return byLane;
}

export interface InjectInput {
  plan: IterationPlan & { fault: FaultPlan };
  provider?: SandboxProvider;
  proxies?: LaneProxies;
  /** The worker that holds the work when the fault comes (it is not killed, except by worker-kill's plan). */
  worker: WorkerProcess;
  startedAtMs: number;
  /**
   * Starts the worker that takes over, with `env` added to its environment. A paused worker's successor starts while
   * it is stopped (the pause must find someone to take the row), a skewed one while the holder sends; for the other
   * kinds once the fault is over.
   */
  startSuccessor(env?: Record<string, string>): Promise<void>;
}

/**
 * Takes note of where this iteration's requests begin in the provider's request log (the lane's provider keeps the
 * log of earlier iterations); call before the work starts. Answers the injection, which waits for the provider to hold
 * this iteration's targeted reply and does the rest.
 *
 * A reply toxic (provider-reset, provider-timeout) goes on the provider's proxy only once the provider holds the
 * targeted request's committed reply, and comes off as soon as that reply has met it: every other request of the
 * iteration (a saga's charge before its refund, lookups and resends after) passes untouched. It counts as injected only
 * when it hit, that is when the provider still held the reply after the toxic was in place, so the reply went out
 * through it.
 */
export async function armFault(input: InjectInput): Promise<(settled: Promise<void>) => Promise<FaultRecord>> {
  const { plan, proxies } = input;
  const { kind } = plan.fault;
  const providerProxy = plan.provider ? proxies?.providers[plan.provider] : undefined;
  if (NETWORK_KINDS.includes(kind) && !proxies) throw new Error(`${kind} needs the lane's toxiproxy proxies`);
  const toxic = replyToxic(plan.fault);
  if (toxic && !providerProxy) throw new Error(`${kind} needs a sandbox provider behind toxiproxy`);
  const target: HeldTarget | undefined =
    input.provider && plan.providerOp
      ? { provider: input.provider, op: plan.providerOp, from: (await input.provider.ledger()).requests.length }
      : undefined;
  return async (settled) => {
    const record = (injected: boolean, detail?: string): FaultRecord => ({
      kind,
      injected,
      atMs: Date.now() - input.startedAtMs,
      ...(detail ? { detail } : {}),
    });
    if (!target || !(await targetHeld(target, settled))) {
      return record(false, 'the provider never held the targeted reply');
    }
    if (toxic) return replyFault(target, providerProxy!, toxic, record);
    const at = record(true);
    switch (kind) {
      case 'worker-pause': {
        // A worker that is gone (it exited on its own) cannot be paused or woken: say how it ended, and let the
        // successor take the work over, so the iteration's effects are still counted.
        let workSettled = false;
        const markSettled = () => (workSettled = true);
        settled.then(markSettled, markSettled);
        const gone = async (when: WorkerExitMoment) => {
          const judged = judgeWorkerExit({
            pid: input.worker.pid,
            when,
            exit: await input.worker.exited,
            workSettled,
            output: input.worker.output(),
          });
          return { ...at, workerExited: judged.reason, workerExitExplained: judged.explained };
        };
        if (!signalWorker(input.worker, 'SIGSTOP')) return gone('before its pause');
        const pausedAt = Date.now();
        await input.startSuccessor();
        await sleep(Math.max(0, (plan.fault.durationMs ?? 0) - (Date.now() - pausedAt)));
        if (!signalWorker(input.worker, 'SIGCONT')) return gone('during its pause');
        return at;
      }
      case 'clock-skew':
        // The holder lives on and sends; beside it on its task queue, a worker whose lease clock runs a lease ahead.
        await input.startSuccessor({ RETRYSAFE_LEASE_CLOCK_OFFSET_MS: String(plan.fault.skewMs ?? 0) });
        return at;
      case 'temporal-partition':
      case 'ledger-partition': {
        const proxy = kind === 'temporal-partition' ? proxies!.temporal : proxies!.ledger;
        if (!proxy) return record(false, 'the lane reaches no PostgreSQL ledger through toxiproxy');
        await proxy.cut();
        await sleep(plan.fault.durationMs ?? 0);
        await proxy.heal();
        return { ...at, healedAtMs: Date.now() - input.startedAtMs };
      }
      default:
        // server-restart: the run restarts the server now that this iteration has reached its moment (schedule.ts).
        return at;
    }
  };
}

/**
 * Sends `sig` to the worker's process. False when the process is gone: it had exited (its exit already seen), or it
 * exited but its exit has not reached this process yet (the kernel answers ESRCH). Any other refusal is the harness's
 * own error and is thrown, rather than taken for an exit this process would then wait for forever.
 */
export function signalWorker(
  worker: Pick<WorkerProcess, 'pid' | 'alive'>,
  sig: NodeJS.Signals,
  kill: (pid: number, sig: NodeJS.Signals) => void = (pid, s) => process.kill(pid, s),
): boolean {
  if (!worker.alive()) return false;
  try {
    kill(worker.pid, sig);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** When the holder of a fault iteration's work was found gone. */
export type WorkerExitMoment = 'before its pause' | 'during its pause' | 'before the iteration ended';

/**
 * What the holder's own exit says about the iteration. The harness never ends it before the iteration is over (it is
 * not the iteration's crash, nor a worker a server restart replaces), and a worker process does not end when its work
 * does: it polls until it is told to stop. So only a clean exit (code 0, no signal) after the work had settled is
 * explained (a worker told to stop by someone else once nothing was left to do); a crash, a signal (a stopped process
 * ends only by one) or any exit while the work was still open is unexplained.
 */
export function judgeWorkerExit(input: {
  pid: number;
  when: WorkerExitMoment;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  /** Whether the work had settled when the exit was seen. */
  workSettled: boolean;
  output: string;
}): { explained: boolean; reason: string } {
  const { code, signal } = input.exit;
  const explained = code === 0 && signal === null && input.workSettled;
  const tail = input.output.trim().split('\n').slice(-3).join(' | ').slice(-600);
  const why = explained
    ? 'a clean exit after the work had settled'
    : signal !== null
      ? `killed by ${signal}, which the harness did not send`
      : code === 0
        ? 'a clean exit while the work was still open'
        : 'it failed';
  return {
    explained,
    reason: `the worker (pid ${input.pid}) exited ${input.when}, code ${code}, signal ${signal} (${why}); its last output: ${tail}`,
  };
}

/** The toxic a reply fault puts on the provider's proxy: a reset as the reply comes back, or the reply withheld. */
export function replyToxic(fault: FaultPlan): Toxic | undefined {
  if (fault.kind === 'provider-reset') return RESET_AFTER_COMMIT;
  if (fault.kind === 'provider-timeout') return replyWithheld(fault.durationMs ?? 0);
  return undefined;
}

/** This iteration's targeted request: the plan's one held reply, at `op`, past `from` in the provider's request log. */
interface HeldTarget {
  provider: SandboxProvider;
  op: string;
  from: number;
}

/** Whether the provider holds the targeted request's committed reply right now (its hold has not ended). */
export async function holdsTarget({ provider, op, from }: HeldTarget): Promise<boolean> {
  const ledger = await provider.ledger();
  return (
    ledger.committedButUnanswered >= 1 &&
    ledger.requests.slice(from).some((r) => r.op === op && r.faults.includes('hold-after-commit'))
  );
}

/**
 * Puts the reply toxic on the provider's proxy while the provider holds the targeted reply, and lifts it once that
 * reply has gone out through it (a withheld reply: once the toxic closed its connection too). Injected only when the
 * reply was still held after the toxic was in place; otherwise the reply may have passed before it.
 */
async function replyFault(
  target: HeldTarget,
  proxy: ToxicProxy,
  toxic: Toxic,
  record: (injected: boolean, detail?: string) => FaultRecord,
): Promise<FaultRecord> {
  const addedAt = Date.now();
  await proxy.addToxic(toxic);
  try {
    const at = record(true);
    if (!(await holdsTarget(target))) return record(false, 'the held reply went out before the toxic was in place');
    await target.provider.waitForInflight((s) => s.committedButUnanswered === 0, POINT_WAIT_MS);
    // A withheld reply's connection closes `timeout` ms after the toxic reached it (toxiproxy's timeout toxic).
    const closesAt = toxic.type === 'timeout' ? addedAt + (toxic.attributes.timeout ?? 0) : Date.now();
    await sleep(Math.max(0, closesAt - Date.now()) + TOXIC_MARGIN_MS);
    return at;
  } finally {
    await proxy.removeToxic(toxic.name).catch(() => undefined);
  }
}

/** Waits for the provider to hold this iteration's targeted reply; false when the work settled or time ran out. */
async function targetHeld(target: HeldTarget, work: Promise<void>): Promise<boolean> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const deadline = Date.now() + POINT_WAIT_MS;
  while (Date.now() < deadline && !settled) {
    try {
      await target.provider.waitForInflight((s) => s.committedButUnanswered >= 1, 1_000);
    } catch {
      continue; // nothing held yet
    }
    // Some reply is held, or passing: only the plan's held request is the fault's moment.
    if (await holdsTarget(target)) return true;
    await sleep(HELD_POLL_MS);
  }
  return false;
}
