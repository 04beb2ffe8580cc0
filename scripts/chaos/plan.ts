import { exampleRegistry } from '../../examples/tools';
import type { Fault, ProviderKind } from '../../examples/sandbox-providers/spawn';
import { describeFault, withFault, type FaultKind } from './faults';
import { createRng, deriveSeed, type Rng } from './prng';
import {
  CLUSTER_FAULT_TARGETS,
  type ChaosScenario,
  type ClusterFaultPlan,
  type ClusterFaultTarget,
  type CrashMode,
  type FaultChoice,
  type IterationPlan,
} from './types';

/** The sandbox provider operation each retrysafe operation POSTs to; faults are armed by this name. */
/** The sandbox provider each example tool talks to. */
export const PROVIDER_OF: Record<string, ProviderKind> = {
  charge: 'payments',
  refund: 'payments',
  'send-email': 'email',
  'create-ticket': 'tickets',
  reserve: 'inventory',
  release: 'inventory',
  'create-shipment': 'shipping',
};

export const PROVIDER_OP: Record<string, string> = {
  charge: 'charges.create',
  refund: 'refunds.create',
  'send-email': 'messages.create',
  'create-ticket': 'tickets.create',
  reserve: 'reservations.create',
  release: 'releases.create',
  'create-shipment': 'shipments.create',
};

/** Held replies outlast the kill by far (the harness kills within ~50 ms of the commit). */
const HOLD_MS: readonly [number, number] = [3_000, 6_000];
/** random-time kills land anywhere from the first workflow task to well into recovery paths. */
const RANDOM_KILL_MS: readonly [number, number] = [50, 3_000];
const DELAY_FAULT_MS: readonly [number, number] = [100, 1_500];
/** A stalled owner stays stopped past its heartbeat timeout (2 s) and the next attempt's takeover. */
const STALL_MS: readonly [number, number] = [4_000, 8_000];
const SUCCESSOR_DELAY_MS: readonly [number, number] = [0, 1_000];

/** One iteration in ten asks for a dev-server restart: a few per hundred crashes, each costing seconds. */
export const DEFAULT_RESTART_RATE = 0.1;

/** A killed service or database stays down this long before it is started again. */
const CLUSTER_DOWN_MS: readonly [number, number] = [300, 3_000];
/** Where the harness reaches the point itself, half the iterations leave the worker running through the kill. */
const SPARE_WORKER_CHANCE = 0.5;

export interface PlanOptions {
  /** Probability that an iteration asks for a dev-server restart during its batch's recovery. */
  restartRate: number;
  /** `cluster`: every iteration also kills a cluster service or the database at its crash point. */
  target?: 'dev-server' | 'cluster';
  /** `--faults`: each iteration draws one of these kinds (faults.ts). */
  faults?: readonly FaultKind[];
}

/**
 * The whole plan of one iteration, from the run's seed and the iteration's index only: crash mode and
 * timing, the provider's fault mix and read lag, and whether the dev server restarts. Constraints keep
 * each mode meaningful (an after-commit crash needs a reply to arrive; before-lookup needs a lookup).
 */
export function planIteration(seed: number, index: number, scenario: ChaosScenario, opts: PlanOptions): IterationPlan {
  const rng = createRng(deriveSeed(seed, index));
  const contract = scenario.realServer?.tool ?? exampleRegistry().get(scenario.operation);
  const modes = scenario.modes.filter(([m]) => m !== 'before-lookup' || contract.dedupe === 'lookup');
  const mode = rng.weighted(modes);
  const declined = mode === 'before-send' && rng.chance(scenario.declineChance);
  const providerOp = PROVIDER_OP[scenario.operation];
  const faults: Fault[] = [];

  if (declined) faults.push({ op: providerOp, kind: 'decline', times: 1 });
  else faults.push(...beforeCommitFaults(rng, providerOp, allowedBefore(scenario, mode)));

  if (mode === 'gateway-error') {
    // The first commit is answered with an error status that proves nothing (and the worker dies on hearing it).
    faults.push({ op: providerOp, kind: 'status-after-commit', status: rng.pick([502, 504]), times: 1 });
  }
  let holdMs: number | undefined;
  if (mode === 'in-flight') {
    holdMs = rng.int(...HOLD_MS);
    // First among the after-commit faults, so it strikes the first request that commits.
    faults.push({ op: providerOp, kind: 'hold-after-commit', delayMs: holdMs, times: 1 });
  }
  const mustDrop = mode === 'before-lookup';
  // A dropped reply would keep an after-commit crash from ever seeing one on providers that are not resent to.
  const mayDrop =
    !declined && !((mode === 'after-commit' || mode === 'gateway-error') && contract.dedupe !== 'idempotency-key');
  if (mustDrop || (mayDrop && rng.chance(scenario.dropChance))) {
    faults.push({ op: providerOp, kind: 'drop-after-commit', times: 1 });
  }

  const plan: IterationPlan = {
    index,
    scenario: scenario.name,
    seed: deriveSeed(seed, index),
    operation: scenario.operation,
    // A real server has no sandbox provider: its scenarios draw no faults (realServerScenario gives them none).
    ...(scenario.realServer ? {} : { provider: PROVIDER_OF[scenario.operation], providerOp }),
    crash: {
      mode,
      ...(mode === 'random-time' ? { delayMs: rng.int(...(scenario.randomKillMs ?? RANDOM_KILL_MS)) } : {}),
      ...(holdMs !== undefined ? { holdMs } : {}),
      ...(mode === 'stalled-owner' ? { stallMs: rng.int(...STALL_MS) } : {}),
    },
    faults,
    readLagMs: rng.int(scenario.readLagMs[0], Math.min(scenario.readLagMs[1], contract.readAfterWriteLagMs)),
    declined,
    serverRestart: rng.chance(opts.restartRate),
    successorDelayMs: rng.int(...SUCCESSOR_DELAY_MS),
    // Drawn last, so a seed plans the same worker crashes and faults on either target.
    ...(opts.target === 'cluster' ? { clusterFault: planClusterFault(rng, index, mode) } : {}),
  };
  return opts.faults ? withFault(plan, seed, opts.faults) : plan;
}

/**
 * Targets in turn, each once in every four consecutive iterations (so every hundred kill each 25 times), shifted by
 * one every four: scenarios are dealt by index too (`i % scenarios`), and a plain `i % 4` would only ever give a
 * scenario half of the targets when there are six of them.
 */
export function clusterFaultTarget(index: number): ClusterFaultTarget {
  const n = CLUSTER_FAULT_TARGETS.length;
  return CLUSTER_FAULT_TARGETS[(index + Math.floor(index / n)) % n];
}

function planClusterFault(rng: Rng, index: number, mode: CrashMode): ClusterFaultPlan {
  const harnessReachesPoint = mode === 'in-flight' || mode === 'random-time';
  return {
    target: clusterFaultTarget(index),
    spareWorker: harnessReachesPoint && rng.chance(SPARE_WORKER_CHANCE),
    downMs: rng.int(...CLUSTER_DOWN_MS),
  };
}

/** after-commit (and gateway-error) needs the first reply to answer a commit: only a delay may come before it. */
function allowedBefore(scenario: ChaosScenario, mode: CrashMode): ChaosScenario['faultPool'] {
  if (mode !== 'after-commit' && mode !== 'gateway-error') return scenario.faultPool;
  return scenario.faultPool.filter(([f]) => f === 'none' || f === 'delay');
}

function beforeCommitFaults(rng: Rng, op: string, pool: ChaosScenario['faultPool']): Fault[] {
  const choice: FaultChoice = pool.length ? rng.weighted(pool) : 'none';
  switch (choice) {
    case 'none':
      return [];
    case 'status-5xx':
      // Before the commit, the sandbox's documented "nothing done" (SANDBOX_STATUS_RULES); a 5xx that proves
      // nothing is the gateway-error crash mode's, after a commit.
      return [{ op, kind: 'status-5xx', times: rng.int(1, 2), status: 503 }];
    case 'status-429':
      return [{ op, kind: 'status-429', times: 1 }];
    case 'reset':
      return [{ op, kind: 'reset', times: 1 }];
    case 'delay':
      return [{ op, kind: 'delay', delayMs: rng.int(...DELAY_FAULT_MS), times: 1 }];
  }
}

/** One line for progress and failure reports: `#17 renewal in-flight(hold 4200ms) faults: 5xx×2, drop`. */
export function describePlan(plan: IterationPlan): string {
  const crash =
    plan.crash.mode === 'random-time'
      ? `random-time(${plan.crash.delayMs}ms)`
      : plan.crash.mode === 'in-flight'
        ? `in-flight(hold ${plan.crash.holdMs}ms)`
        : plan.crash.mode;
  const faults = plan.faults
    .filter((f) => f.kind !== 'hold-after-commit')
    .map((f) => `${f.kind}${f.times && f.times > 1 ? `×${f.times}` : ''}${f.delayMs ? `(${f.delayMs}ms)` : ''}`);
  if (plan.fault && plan.fault.kind !== 'worker-kill') {
    return `#${plan.index} ${plan.scenario} ${describeFault(plan.fault)} at ${plan.operation}, lag ${plan.readLagMs}ms`;
  }
  return (
    `#${plan.index} ${plan.scenario} ${crash} at ${plan.operation}` +
    `, faults: ${faults.length ? faults.join(', ') : 'none'}, lag ${plan.readLagMs}ms` +
    (plan.serverRestart ? ', server restart' : '') +
    (plan.clusterFault
      ? `, kill ${plan.clusterFault.target}${plan.clusterFault.spareWorker ? ' (worker spared)' : ' with the worker'}` +
        ` for ${plan.clusterFault.downMs}ms`
      : '')
  );
}
