import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ExampleServer } from '../lib/example-servers';
import { startStack, type Stack } from '../lib/stack';
import { createApprover } from './approvals';
import { Iteration } from './iteration';
import { startLanes, type Lane } from './lanes';
import { formatIndexes } from './args';
import { needsBatches, restartsAtItsMoment, runInLanes, type Work } from './schedule';
import { DEFAULT_RESTART_RATE, describePlan, planIteration } from './plan';
import { randomSeed } from './prng';
import { SCENARIOS, scenarioByName } from './registry';
import { ClusterFaults } from './cluster-faults';
import { failureOf, isFailure, summarize, summarizeClusterKills, type ChaosReport } from './report';
import { restartServerAndCheckWorkers } from './server-restart';
import { needsPostgresLedger, needsToxiproxy, proxyLanes, type FaultKind, type LaneProxies } from './faults';
import { startPostgres } from '../lib/postgres-server';
import { startToxiproxy, type ToxiproxyServer } from '../lib/toxiproxy-server';
import type { ChaosScenario, IterationResult, Variant } from './types';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ChaosOptions {
  /** Iterations, each ending one worker with one real SIGKILL (per variant). */
  crashes: number;
  /** Replays a run; a random one is drawn (and printed) when absent. */
  seed?: number;
  /** Iteration i runs scenarios[i % length]. */
  scenarios: readonly string[];
  /** Iterations in flight at once, each on its own lane of providers. */
  concurrency: number;
  /** Also run every plan of scenarios that have one on bare Temporal. */
  baseline?: boolean;
  /** Probability per iteration of a dev-server restart during its batch's recovery. */
  restartRate?: number;
  /** Run only these iteration indexes of the seeded sequence (a rerun of failures). */
  only?: readonly number[];
  /** Progress lines (one per iteration, or per batch with a restart rate); stderr in the CLI. */
  log?: (line: string) => void;
  /**
   * Aborted: start no further iteration; the running ones finish and the report covers what ran. The CLI
   * aborts it on Ctrl-C and when --minutes has passed.
   */
  stop?: AbortSignal;
  /** Reuse a running stack (tests); otherwise one is started and stopped. */
  stack?: Stack;
  /**
   * `cluster`: the stack runs on the real server's services (scripts/lib/temporal-cluster.ts), and every iteration
   * also kills one of history, matching, frontend or PostgreSQL at its crash point (plan.ts), then restarts it.
   * Dev-server restarts are off there unless a restart rate is given.
   */
  target?: 'dev-server' | 'cluster';
  /**
   * `--faults`: each iteration injects one of these kinds, drawn by the seed (faults.ts). Dev-server restarts then
   * come only from the `server-restart` kind unless a restart rate is given.
   */
  faults?: readonly FaultKind[];
}

/**
 * Runs the seeded crash sequence on `concurrency` lanes, each iteration killing its worker at its planned point
 * under its planned faults and counting the outcome at the providers. Each lane takes the next iteration as soon
 * as its last one is counted (schedule.ts); with a restart rate the lanes go in batches instead, so that the dev
 * server restarts during the recovery of every iteration of a batch. The baseline replays the same plans afterwards
 * on bare Temporal.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const scenarios = options.scenarios.map(resolveScenario);
  const seed = options.seed ?? randomSeed();
  const target = options.target ?? 'dev-server';
  if (target === 'cluster' && (options.restartRate ?? 0) > 0) {
    throw new Error('chaos: no restart rate on the cluster target; each iteration kills one of its services instead');
  }
  const restartRate = options.restartRate ?? (target === 'cluster' || options.faults ? 0 : DEFAULT_RESTART_RATE);
  const indexes = options.only ? [...options.only] : Array.from({ length: options.crashes }, (_, i) => i);
  const plans = indexes.map((i) =>
    planIteration(seed, i, scenarios[i % scenarios.length], {
      restartRate,
      target,
      ...(options.faults ? { faults: options.faults } : {}),
    }),
  );
  const runTag = `r${Date.now().toString(36)}`;
  const logDir = path.join(ROOT, '.out', 'chaos', runTag);
  await mkdir(logDir, { recursive: true });
  const rerun = rerunCommand(options, seed);
  log(
    `chaos: seed ${seed}, ${plans.length} iteration(s) on the ${target}, concurrency ${options.concurrency}, logs in ${path.relative(ROOT, logDir)}`,
  );

  // A ledger partition needs a network path to cut: the run keeps its ledger on a PostgreSQL of its own, which every
  // lane's workers reach through toxiproxy.
  const ledgerServer =
    !options.stack && target !== 'cluster' && options.faults && needsPostgresLedger(options.faults)
      ? await startPostgres({ log: (m) => log(`  ${m}`), maxConnections: 300 })
      : undefined;
  if (ledgerServer) log(`  ledger on PostgreSQL ${ledgerServer.host}:${ledgerServer.port} (ledger-partition)`);
  const stack =
    options.stack ??
    (await startStack({
      temporal: target,
      log: (m) => log(`  ${m}`),
      // On the cluster the ledger shares the cluster's PostgreSQL, which iterations kill with an immediate shutdown.
      ...(target === 'cluster'
        ? { ledgerOnClusterPostgres: true }
        : {
            ledger: ledgerServer
              ? await ledgerServer.createDatabase('retrysafe_ledger')
              : `sqlite:${path.join(logDir, 'ledger.sqlite')}`,
          }),
    }));
  if (target === 'cluster' && !stack.cluster) throw new Error('chaos: --target cluster needs a stack on the cluster');
  const clusterFaults = target === 'cluster' ? new ClusterFaults(stack.cluster!) : undefined;
  const faulted = [...new Set(scenarios.flatMap((s) => s.providers))];
  const approver = createApprover();
  const results: IterationResult[] = [];
  let lanes: Lane[] = [];
  const servers = new Map<string, ExampleServer>();
  let serverRestarts = 0;
  let stoppedEarly: string | undefined;
  let workersReplaced = 0;
  let toxiproxy: ToxiproxyServer | undefined;
  let proxies = new Map<number, LaneProxies>();
  try {
    lanes = await startLanes(stack, options.concurrency, faulted, logDir);
    if (options.faults && needsToxiproxy(options.faults)) {
      toxiproxy = await startToxiproxy({ log: (m) => log(`  ${m}`) });
      proxies = await proxyLanes(toxiproxy, stack, lanes);
      log(`  toxiproxy ${toxiproxy.apiUrl}: every lane's workers reach its providers and Temporal through it`);
    }
    // Each real-server scenario's server, once for the run: iterations tell their effects apart by event ID.
    for (const scenario of scenarios.filter((s) => s.realServer)) {
      const server = await scenario.realServer!.start((m) => log(`  ${scenario.name}: ${m}`));
      servers.set(scenario.name, server);
      log(`  ${scenario.name}: ${server.describe} started`);
    }
    const variants: Variant[] = ['retrysafe', ...(options.baseline ? (['baseline'] as const) : [])];
    const work: Work[] = variants.flatMap((variant) =>
      plans
        .filter((p) => variant === 'retrysafe' || scenarioByName(p.scenario)?.baseline)
        .map((plan) => ({ variant, plan })),
    );
    const lanesRunOn = !needsBatches(work);
    const restartsMidRun = lanesRunOn && work.some(restartsAtItsMoment);
    const makeIteration = ({ variant, plan }: Work, j: number) =>
      new Iteration({
        stack,
        lane: lanes[j],
        scenario: scenarioByName(plan.scenario)!,
        variant,
        plan,
        runTag,
        logDir,
        approver,
        ...(proxies.has(lanes[j].index) ? { proxies: proxies.get(lanes[j].index)! } : {}),
        ...(clusterFaults ? { clusterFaults } : {}),
        ...(servers.has(plan.scenario) ? { server: servers.get(plan.scenario)! } : {}),
        ...(restartsMidRun ? { retrySpawns: true } : {}),
      });
    /** Restarts the dev server and waits for the successors of `iterations` to poll again (or replaces them). */
    const restart = async (iterations: readonly Iteration[]) => {
      const r = await restartServerAndCheckWorkers(
        stack,
        iterations.flatMap((it) => (it.tracked ? [it.tracked] : [])),
      );
      serverRestarts++;
      workersReplaced += r.replaced;
      log(`  ${target} restarted in ${r.restartMs} ms; ${r.reconnected} worker(s) reconnected, ${r.replaced} replaced`);
    };
    if (lanesRunOn) {
      log(`  ${options.concurrency} lane(s), each taking the next iteration as soon as its last one is counted`);
      ({ stoppedEarly } = await runInLanes({
        work,
        concurrency: options.concurrency,
        make: makeIteration,
        results,
        log,
        describe: (r) => iterationLine(r, rerun),
        ...(options.stop ? { stop: options.stop } : {}),
        // Every lane's successors must come back, not only this iteration's: the restart reaches them all.
        afterBegin: async (_iteration, item, inFlight) => (restartsAtItsMoment(item) ? restart(inFlight) : undefined),
      }));
    } else {
      const batches = variants.flatMap((variant) => {
        const mine = work.filter((w) => w.variant === variant).map((w) => w.plan);
        return Array.from({ length: Math.ceil(mine.length / options.concurrency) }, (_, b) => ({
          variant,
          number: b,
          of: mine.length,
          plans: mine.slice(b * options.concurrency, (b + 1) * options.concurrency),
        }));
      });
      const iterationsOf = (batch: (typeof batches)[number]) =>
        batch.plans.map((plan, j) => makeIteration({ variant: batch.variant, plan }, j));
      let next = batches.length ? iterationsOf(batches[0]) : [];
      next.forEach((it) => it.prepare());
      try {
        for (const [b, batch] of batches.entries()) {
          if (options.stop?.aborted) {
            stoppedEarly = `${String(options.stop.reason ?? 'stopped')}, before batch ${b + 1} of ${batches.length}`;
            log(`stopping: ${stoppedEarly}`);
            break;
          }
          const batchStarted = Date.now();
          const iterations = next;
          await Promise.all(iterations.map((it) => it.begin()));
          if (batch.plans.some((p) => p.serverRestart)) await restart(iterations);
          // The next batch's doomed workers start while this one recovers; they poll queues nobody uses yet.
          next = b + 1 < batches.length ? iterationsOf(batches[b + 1]) : [];
          next.forEach((it) => it.prepare());
          const batchResults = await Promise.all(iterations.map((it) => it.finish()));
          results.push(...batchResults);
          log(
            progressLine(
              batch.variant,
              batch.number,
              batch.of,
              options.concurrency,
              results,
              batchResults,
              batchStarted,
            ),
          );
          for (const r of batchResults) log(iterationLine(r, rerun));
        }
      } finally {
        await Promise.all(next.map((it) => it.abandon()));
      }
    }
  } finally {
    // Each stop runs whatever another one threw: a lane that failed to stop must not leave a server running.
    await Promise.allSettled(lanes.map((l) => l.stop()));
    await Promise.allSettled([...servers.values()].map((server) => server.stop()));
    await toxiproxy?.stop();
    if (!options.stack) await stack.stop();
    await ledgerServer?.stop();
  }

  const retrysafeResults = results.filter((r) => r.variant === 'retrysafe');
  const baselineResults = results.filter((r) => r.variant === 'baseline');
  const report: ChaosReport = {
    seed,
    target,
    ...(target === 'cluster' ? { cluster: summarizeClusterKills(retrysafeResults) } : {}),
    crashesRequested: plans.length,
    ...(stoppedEarly ? { stoppedEarly } : {}),
    concurrency: options.concurrency,
    durationMs: Date.now() - started,
    serverRestarts,
    workersReplacedAfterRestart: workersReplaced,
    retrysafe: summarize(retrysafeResults),
    ...(baselineResults.length ? { baseline: summarize(baselineResults) } : {}),
    failures: retrysafeResults.filter(isFailure).map((r) => failureOf(r, (i) => rerunOne(rerun, i))),
    rerun,
    logDir: path.relative(ROOT, logDir),
    iterations: results,
  };
  return report;
}

function resolveScenario(name: string): ChaosScenario {
  const found = scenarioByName(name);
  if (found) return found;
  const known = SCENARIOS.map((s) => s.name).join(', ');
  throw new Error(`--scenario: unknown scenario ${JSON.stringify(name)}; available: ${known}`);
}

function rerunCommand(o: ChaosOptions, seed: number): string {
  const parts = ['npm run chaos --', `--seed ${seed}`, `--crashes ${o.crashes}`];
  if (o.target === 'cluster') parts.push('--target cluster');
  for (const s of o.scenarios) parts.push(`--scenario ${s}`);
  if (o.faults) parts.push(`--faults ${o.faults.join(',')}`);
  parts.push(`--concurrency ${o.concurrency}`);
  const defaultRate = o.target === 'cluster' ? 0 : DEFAULT_RESTART_RATE;
  if (o.restartRate !== undefined && o.restartRate !== defaultRate) parts.push(`--restart-rate ${o.restartRate}`);
  if (o.baseline) parts.push('--baseline');
  if (o.only) parts.push(`--only ${formatIndexes(o.only)}`);
  return parts.join(' ');
}

/** The same seeded plan for one iteration, alone: its plan depends only on seed and index. */
function rerunOne(rerun: string, index: number): string {
  return `${rerun
    .replace(/ --concurrency \d+/, '')
    .replace(/ --baseline/, '')
    .replace(/ --only \S+/, '')} --only ${index} --concurrency 1`;
}

function iterationLine(r: IterationResult, rerun: string): string {
  const t = r.tally;
  const head = `${r.variant === 'retrysafe' && isFailure(r) ? '✗' : '·'} ${describePlan(r.plan)}`;
  const kill = r.fault
    ? `${r.fault.kind} ${r.fault.injected ? `at ${r.fault.atMs} ms` : `not injected (${r.fault.detail ?? '?'})`}`
    : r.crash
      ? `${r.crash.signal ?? 'no signal'} at ${r.crash.atMs} ms${r.crash.pointReached ? '' : ' (point missed)'}`
      : 'no crash';
  const steps = Object.entries(r.timeline)
    .map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)}`)
    .join(', ');
  const tail = `→ ${t.outcome}, effects ${t.actualEffects}/${t.expectedEffects}, dup ${t.duplicates}, lost ${t.lost}; ${kill}; s: ${steps}`;
  const why =
    r.variant === 'retrysafe' && isFailure(r)
      ? `\n      ${failureOf(r, (i) => rerunOne(rerun, i)).reasons.join('; ')}`
      : '';
  return `  ${head} ${tail}${why}`;
}

function progressLine(
  variant: Variant,
  batch: number,
  total: number,
  k: number,
  all: readonly IterationResult[],
  batchResults: readonly IterationResult[],
  batchStarted: number,
): string {
  const mine = all.filter((r) => r.variant === variant);
  const { totals } = summarize(mine);
  const scen = [...new Set(batchResults.map((r) => r.scenario))].join('+');
  return (
    `[${variant}] batch ${batch + 1}/${Math.ceil(total / k)} (${scen}) · crashes ${totals.crashes}/${total}` +
    ` · dup ${totals.duplicates} · lost ${totals.lost} · unexplained ${totals.unexplained}` +
    ` · review ${totals.needsReview} · ${((Date.now() - batchStarted) / 1000).toFixed(1)} s`
  );
}
