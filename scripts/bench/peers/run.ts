import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { renewalInputFor } from '../../chaos/scenario-renewal';
import { startStack } from '../../lib/stack';
import { runLoad, summarize } from '../stats';
import { effectsOf } from './effects';
import { peerRatios, type PeerLeg, type PeerRatios } from './ratios';
import { startInProcessWorkers, type InProcessWorkers } from '../in-process-workers';
import { assertEager } from '../legs';
import { bareActivitySystem, retrysafeEagerSystem, retrysafeSystem, startPeers } from './systems';
import type { PeerChargeInput, PeerCrashTarget, PeerSystem } from './types';

export interface PeerBenchOptions {
  iterations: number;
  concurrency: number;
  repeats: number;
  /** Crash iterations per system and target; 0 skips the crash scenario. */
  crashes: number;
  log(line: string): void;
}

export type { PeerLeg } from './ratios';

export interface PeerCrashResult {
  system: string;
  target: PeerCrashTarget;
  iterations: number;
  /** Effects counted at the provider, summed over the iterations; one per iteration is right. */
  effects: number;
  duplicates: number;
  /** retrysafe only: how its actions ended (confirmed by lookup, or needs_review for a person). */
  outcomes?: Record<string, number>;
}

export interface PeerBenchReport {
  machine: string;
  versions: Record<string, string>;
  iterations: number;
  concurrency: number;
  repeats: number;
  legs: PeerLeg[];
  /** Each Temporal system's p50 over each peer's, by operation and load level (peerRatios). */
  ratios: PeerRatios;
  /** The eager system's starts, warm-up included: asked to be eager, and started eagerly. */
  eagerStarts: { requested: number; eager: number };
  crashes: PeerCrashResult[];
  durationMs: number;
}

interface System {
  name: string;
  charge(input: PeerChargeInput): Promise<unknown>;
  renewal?: PeerSystem['renewal'];
}

const WORKERS = 2;
const WARMUP = 3;
const TARGETS: PeerCrashTarget[] = ['send-email', 'create-ticket'];

/**
 * The same keyed charge and the same three-step renewal on retrysafe, Restate and DBOS (and the charge on a bare
 * Temporal activity, the floor), all against one set of sandbox providers, measured in interleaved rounds; then
 * the same SIGKILL-after-commit on each, through the key-less email provider and the lagging lookup one, counted
 * at the provider.
 */
export async function runPeerBench(o: PeerBenchOptions): Promise<PeerBenchReport> {
  const started = Date.now();
  const tag = Date.now().toString(36);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bench-peers-'));
  const stack = await startStack({ log: (m) => o.log(`  ${m}`) }).catch(async (err: unknown) => {
    await rm(workDir, { recursive: true, force: true });
    throw err;
  });
  let peers: PeerSystem[] = [];
  let inProcess: InProcessWorkers | undefined;
  try {
    const taskQueue = `peers-${tag}`;
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) =>
        stack.startWorker({ name: `${taskQueue}-w${i}`, env: { RETRYSAFE_TASK_QUEUE: taskQueue } }),
      ),
    );
    peers = await startPeers(stack, workDir, o.log);
    const retrysafe = retrysafeSystem(stack, taskQueue, `${taskQueue}-crash`);
    // The same run as an agent service starts it, its workers beside its client (eager start).
    const eagerQueue = `${taskQueue}-eager`;
    inProcess = await startInProcessWorkers(stack, eagerQueue, WORKERS, stack.ledger);
    const eager = retrysafeEagerSystem(inProcess, eagerQueue, stack.ledger);
    const systems: System[] = [bareActivitySystem(stack, taskQueue), retrysafe, eager, ...peers];
    const versions = Object.fromEntries([
      [retrysafe.name, retrysafe.version],
      [eager.name, eager.version],
      ...peers.map((p) => [p.name, p.version]),
    ]);

    const levels: Array<[string, number]> = [
      ['seq', 1],
      [`c${o.concurrency}`, o.concurrency],
    ];
    const legs = new Map<string, PeerLeg>();
    const legOf = (system: string, operation: PeerLeg['operation']) => {
      const id = `${system}/${operation}`;
      if (!legs.has(id)) legs.set(id, { system, operation, stats: {}, rounds: {} });
      return legs.get(id)!;
    };
    // Untimed first: JIT, connection pools, sticky caches and the peers' first registrations.
    for (const system of systems) {
      const tenant = `peers-${system.name.replace(/\W+/g, '-')}`;
      for (let i = 0; i < WARMUP; i++) {
        await system.charge(renewalInputFor({ tenant, eventId: `${tag}-warm-charge-${i}` }));
        if (system.renewal) await system.renewal(renewalInputFor({ tenant, eventId: `${tag}-warm-renewal-${i}` }));
      }
    }
    const samples = new Map<string, number[]>();
    for (let round = 1; round <= o.repeats; round++) {
      o.log(`round ${round} of ${o.repeats}`);
      for (const operation of ['charge', 'renewal'] as const) {
        for (const system of systems) {
          const run = operation === 'charge' ? system.charge.bind(system) : system.renewal?.bind(system);
          if (!run) continue;
          for (const [level, k] of levels) {
            const eventId = (i: number) => `${tag}-${operation}-r${round}-${level}-${i}`;
            const load = await runLoad(o.iterations, k, async (i) => {
              const t0 = performance.now();
              await run(renewalInputFor({ tenant: `peers-${system.name.replace(/\W+/g, '-')}`, eventId: eventId(i) }));
              return performance.now() - t0;
            });
            const s = summarize(load.samples, load.wallMs);
            const leg = legOf(system.name, operation);
            (leg.rounds[level] ??= []).push(s);
            const key = `${system.name}/${operation}/${level}`;
            samples.set(key, [...(samples.get(key) ?? []), ...load.samples]);
            o.log(
              `  ${system.name} ${operation} [${level}]: p50 ${s.p50} ms, p99 ${s.p99} ms, ${s.throughputPerSec}/s`,
            );
          }
        }
      }
    }
    for (const leg of legs.values()) {
      for (const [level] of levels) {
        const rounds = leg.rounds[level];
        const wall = rounds.reduce((ms, r) => ms + r.wallMs, 0);
        leg.stats[level] = summarize(samples.get(`${leg.system}/${leg.operation}/${level}`) ?? [], wall);
      }
    }

    assertEager(eager.name, eager.starts);
    const crashes: PeerCrashResult[] = [];
    if (o.crashes > 0) {
      // retrysafe's crash iterations run on a queue of their own, served only by the worker that crashes and then
      // its successor; the peers replace their own service process.
      for (const target of TARGETS) {
        for (const system of [retrysafe, ...peers]) {
          const result: PeerCrashResult = { system: system.name, target, iterations: 0, effects: 0, duplicates: 0 };
          for (let i = 0; i < o.crashes; i++) {
            const input = { tenant: 'peers-crash', eventId: `${tag}-${system.name}-${target}-${i}`, target };
            const outcome = await system.crashAfterCommit(input);
            const effects = await effectsOf(stack.providers, input);
            result.iterations++;
            result.effects += effects;
            result.duplicates += Math.max(0, effects - 1);
            if (typeof outcome === 'string') (result.outcomes ??= {})[outcome] = (result.outcomes[outcome] ?? 0) + 1;
            o.log(`  crash ${system.name} ${target} #${i + 1}: ${effects} effect(s) at the provider`);
          }
          crashes.push(result);
        }
      }
    }
    await Promise.all(workers.map((w) => w.stop()));
    return {
      machine: `${os.cpus().length} CPU(s), ${os.platform()} ${os.arch()}, node ${process.version}`,
      versions,
      iterations: o.iterations,
      concurrency: o.concurrency,
      repeats: o.repeats,
      legs: [...legs.values()],
      ratios: peerRatios([...legs.values()]),
      eagerStarts: { ...eager.starts },
      crashes,
      durationMs: Date.now() - started,
    };
  } finally {
    await inProcess?.stop();
    await Promise.all(peers.map((p) => p.stop()));
    await stack.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}
