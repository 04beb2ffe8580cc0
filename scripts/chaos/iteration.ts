import { ledgerAgreement } from './ledger-agreement';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExampleClient } from '../../examples/client';
import { exampleRegistry } from '../../examples/tools';
import type { ExampleServer } from '../lib/example-servers';
import type { Stack } from '../lib/stack';
import type { WorkerProcess } from '../lib/worker-process';
import type { Approver } from './approvals';
import type { ClusterFaults } from './cluster-faults';
import { crashSpecFor, inflictCrash } from './crash';
import { armFault, judgeWorkerExit, killsWorker, type FaultPlan, type FaultRecord, type LaneProxies } from './faults';
import { resetLaneFaults, type Lane } from './lanes';
import type { TrackedWorker } from './server-restart';
import type {
  ChaosScenario,
  ClusterFaultRecord,
  CrashRecord,
  IterationContext,
  IterationPlan,
  IterationResult,
  StartedWork,
  Tally,
  Variant,
} from './types';

/**
 * From the first workflow task to the verdict: a crash, a successor's ~5 s start, a heartbeat timeout,
 * reconciliation windows (an email waits two 5 s intervals for evidence) and possibly a server restart.
 * An iteration still unsettled after this is reported as it stands.
 */
export const ITERATION_DEADLINE_MS = 150_000;
/** How long a supervisor keeps starting a worker that exits because the cluster's frontend is down. */
const SUPERVISOR_RETRY_MS = 60_000;

export interface IterationSetup {
  stack: Stack;
  lane: Lane;
  scenario: ChaosScenario;
  variant: Variant;
  plan: IterationPlan;
  /** Distinguishes this run's event IDs from any earlier run on the same server. */
  runTag: string;
  logDir: string;
  approver: Approver;
  /** With `--target cluster`: carries out the plan's kill of a service or the database at the crash point. */
  clusterFaults?: ClusterFaults;
  /** A real-server scenario's server, started for the run; its workers run the scenario's own worker entry. */
  server?: ExampleServer;
  /** With `--faults` kinds that need them: the lane's toxiproxy proxies to its providers and Temporal. */
  proxies?: LaneProxies;
  /**
   * Start workers again when one exits because the server is down: set when another lane may restart the dev server
   * while this iteration starts a worker (`server-restart` faults, lanes running on), as on the cluster.
   */
  retrySpawns?: boolean;
}

/**
 * One iteration on its own task queue (so a worker armed to crash can only take this iteration's work)
 * and its lane's providers. `begin` ends with the crash done and the successor polling; the run may
 * then restart the server; `finish` waits for the outcome and counts it.
 */
export class Iteration {
  readonly eventId: string;
  readonly taskQueue: string;
  tracked?: TrackedWorker;
  private doomed?: WorkerProcess;
  private doomedSpawn?: Promise<WorkerProcess>;
  private crash?: CrashRecord;
  private fault?: FaultRecord;
  private clusterFault?: Promise<ClusterFaultRecord>;
  /** When the work settled, from its start (the clock cluster kills are timed on). */
  private settledAtMs?: number;
  /** A fault iteration's: when its worker, which the fault leaves alive, exited on its own, from the work's start. */
  private doomedExitedAtMs?: number;
  private work?: StartedWork;
  private error?: Error;
  private readonly abort = new AbortController();
  private startedAt = Date.now();
  private readonly timeline: IterationResult['timeline'] = {};

  constructor(private readonly setup: IterationSetup) {
    const { plan, variant, runTag } = setup;
    this.eventId = `${runTag}-${variant === 'baseline' ? 'b' : 'c'}${plan.index}`;
    this.taskQueue = `chaos-${this.eventId}`;
  }

  /**
   * Starts the doomed worker ahead of time (while the previous batch recovers): a worker takes seconds to
   * start, and it polls only this iteration's queue, so it can wait there without touching anything.
   */
  prepare(): void {
    // A fault other than a kill leaves the worker unarmed: it holds the work when the fault comes, and lives on.
    const armed = killsWorker(this.setup.plan.fault?.kind) ? crashSpecFor(this.setup.plan) : undefined;
    this.doomedSpawn ??= this.spawn('doomed', armed);
    this.doomedSpawn.catch(() => undefined); // reported by begin()
  }

  /** Kills a prepared worker whose iteration will not run (the run stopped early). */
  async abandon(): Promise<void> {
    const worker = await this.doomedSpawn?.catch(() => undefined);
    if (worker?.alive()) await worker.kill('SIGKILL');
  }

  async begin(): Promise<void> {
    const { lane, scenario, plan } = this.setup;
    this.startedAt = Date.now();
    try {
      // Every kind this lane may have armed, not just this scenario's: the previous iteration on the lane may
      // have been another scenario (a shipment left failing would turn this renewal into a compensation).
      await resetLaneFaults(lane);
      // A real server's scenario has no sandbox provider to configure or fault.
      const provider = plan.provider ? lane.providers[plan.provider] : undefined;
      await provider?.configure({ readLagMs: plan.readLagMs });
      await scenario.prepare?.(lane.providers);
      this.prepare();
      this.doomed = await this.doomedSpawn!;
      this.mark('doomedReady');
      if (plan.faults.length) await provider!.setFaults(plan.faults);

      const variant = this.setup.variant === 'baseline' ? scenario.baseline : scenario.retrysafe;
      if (!variant) throw new Error(`scenario ${scenario.name} has no ${this.setup.variant} variant`);
      const workStartedAt = Date.now();
      const inject =
        plan.fault && !killsWorker(plan.fault.kind)
          ? await armFault({
              plan: plan as IterationPlan & { fault: FaultPlan },
              ...(provider ? { provider } : {}),
              ...(this.setup.proxies ? { proxies: this.setup.proxies } : {}),
              worker: this.doomed,
              startedAtMs: workStartedAt,
              startSuccessor: (env?: Record<string, string>) => this.startSuccessor(env),
            })
          : undefined;
      this.work = variant.start(this.context());
      const settledAt = () => (this.settledAtMs ??= Date.now() - workStartedAt);
      this.work.settled.then(settledAt, settledAt);
      if (inject) {
        void this.doomed.exited.then(() => (this.doomedExitedAtMs ??= Date.now() - workStartedAt));
        this.fault = await inject(this.work.settled);
        this.mark('crashed');
        if (!this.tracked) await this.startSuccessor();
        return;
      }
      const { clusterFaults } = this.setup;
      const fault = plan.clusterFault;
      this.crash = await inflictCrash({
        plan,
        doomed: this.doomed,
        provider,
        settled: this.work.settled,
        startedAtMs: workStartedAt,
        ...(fault && clusterFaults
          ? {
              atPoint: () => (this.clusterFault ??= clusterFaults.inflict(fault, workStartedAt)),
              spareWorker: fault.spareWorker,
            }
          : {}),
      });
      this.mark('crashed');
      await this.startSuccessor();
    } catch (err) {
      this.error = err as Error;
      if (this.doomed?.alive()) await this.doomed.kill('SIGKILL');
    }
  }

  async finish(): Promise<IterationResult> {
    let tally: Tally;
    let clusterFault: ClusterFaultRecord | undefined;
    try {
      if (this.error) throw this.error;
      const left = ITERATION_DEADLINE_MS - (Date.now() - this.startedAt);
      const timer = new AbortController();
      let settleError: unknown;
      const settled = await Promise.race([
        this.work!.settled.then(
          () => true,
          (err: unknown) => {
            settleError = err;
            return true;
          },
        ),
        sleep(Math.max(0, left), false, { signal: timer.signal }).catch(() => false),
      ]);
      timer.abort();
      this.abort.abort();
      if (settled) this.mark('settled');
      // Counted once the killed service is back: the providers' counts and Temporal's state are final only then.
      clusterFault = await this.clusterFault;
      tally = await this.work!.verify();
      if (this.setup.plan.clusterFault && !clusterFault)
        tally.unexplained.push('the planned cluster kill never happened');
      if (clusterFault?.error) tally.unexplained.push(`cluster ${clusterFault.target}: ${clusterFault.error}`);
      if (clusterFault && this.crash) clusterFault.afterPointMs = clusterFault.atMs - this.crash.atMs;
      // Only a kill that waited its turn past the end of the work is the harness's fault: a random-time point may
      // itself come after the work settled (on the dev server too), and then the kill with it tests the recovery only.
      const settledAtMs = this.settledAtMs;
      if (
        clusterFault &&
        this.crash &&
        settledAtMs !== undefined &&
        this.crash.atMs < settledAtMs &&
        clusterFault.atMs >= settledAtMs
      ) {
        tally.unexplained.push(
          `the ${clusterFault.target} kill waited its turn until ${clusterFault.atMs - settledAtMs} ms after the ` +
            'work had settled, so it tested nothing (kills take turns: try a lower --concurrency)',
        );
      }
      await this.noteDoomedExit();
      if (this.fault?.workerExited) {
        if (this.fault.workerExitExplained) tally.notes = [...(tally.notes ?? []), this.fault.workerExited];
        else tally.unexplained.push(this.fault.workerExited);
      }
      if (this.fault?.healedAtMs !== undefined && this.settledAtMs !== undefined) {
        this.fault.settledAfterHealMs = this.settledAtMs - this.fault.healedAtMs;
      }
      const ledger = this.setup.stack.ledger;
      // The rows are checked against the sandbox providers' records; a real server keeps its own.
      if (ledger && this.setup.variant === 'retrysafe' && !this.setup.scenario.realServer) {
        const agreement = await ledgerAgreement(ledger, this.setup.lane.providers, 'chaos', this.eventId);
        tally.notes = [
          ...(tally.notes ?? []),
          `ledger: ${agreement.rows} row(s), ${agreement.outOfStep.length} out of step`,
        ];
        tally.unexplained.push(...agreement.outOfStep.map((line) => `ledger out of step: ${line}`));
        tally.ledgerRows = agreement.rows;
        tally.ledgerOutOfStep = agreement.outOfStep.length;
      }
      this.mark('verified');
      if (!settled) tally.unexplained.push(`not settled within ${ITERATION_DEADLINE_MS / 1000} s`);
      if (settleError) tally.unexplained.push(`the work failed to start or settle: ${(settleError as Error).message}`);
    } catch (err) {
      this.abort.abort();
      clusterFault ??= await this.clusterFault?.catch(() => undefined);
      tally = harnessFailure(err);
    } finally {
      await this.tracked?.current.stop();
      // A worker spared by the cluster kill is still running.
      if (this.doomed?.alive()) await this.doomed.stop();
    }
    return {
      index: this.setup.plan.index,
      scenario: this.setup.scenario.name,
      variant: this.setup.variant,
      eventId: this.eventId,
      taskQueue: this.taskQueue,
      plan: this.setup.plan,
      ...(this.crash ? { crash: this.crash } : {}),
      ...(clusterFault ? { clusterFault } : {}),
      ...(this.fault ? { fault: this.fault } : {}),
      tally,
      durationMs: Date.now() - this.startedAt,
      timeline: this.timeline,
    };
  }

  /**
   * A fault leaves its worker alive until the iteration ends (only the kill kinds end it): one that exited on its own
   * after the fault (a paused worker that woke into a crash, a holder that died beside a skewed worker) is judged here,
   * before the harness stops it, instead of passing unnoticed.
   */
  private async noteDoomedExit(): Promise<void> {
    const doomed = this.doomed;
    if (!this.fault || this.fault.workerExited || !doomed || doomed.alive() || this.doomedExitedAtMs === undefined) {
      return;
    }
    const judged = judgeWorkerExit({
      pid: doomed.pid,
      when: 'before the iteration ended',
      exit: await doomed.exited,
      workSettled: this.settledAtMs !== undefined && this.settledAtMs <= this.doomedExitedAtMs,
      output: doomed.output(),
    });
    this.fault.workerExited = judged.reason;
    this.fault.workerExitExplained = judged.explained;
  }

  /** The worker that takes the work over from the doomed one, after the plan's delay. */
  private async startSuccessor(env: Record<string, string> = {}): Promise<void> {
    await sleep(this.setup.plan.successorDelayMs);
    const successor = await this.spawn('successor', undefined, env);
    this.mark('successorReady');
    this.tracked = { current: successor, taskQueue: this.taskQueue, respawn: () => this.spawn('replacement') };
  }

  private mark(step: keyof IterationResult['timeline']): void {
    this.timeline[step] = Date.now() - this.startedAt;
  }

  private context(): IterationContext {
    const { stack, lane, plan } = this.setup;
    return {
      stack,
      client: stack.client,
      retrysafe: new ExampleClient(stack.client, { taskQueue: this.taskQueue, tools: exampleRegistry() }),
      taskQueue: this.taskQueue,
      providers: lane.providers,
      plan,
      tenant: 'chaos',
      eventId: this.eventId,
      approver: this.setup.approver,
      signal: this.abort.signal,
      ...(this.setup.server ? { server: this.setup.server } : {}),
      observed: () => ({
        ...(this.crash ? { crash: this.crash } : {}),
        ...(this.fault ? { fault: this.fault } : {}),
      }),
    };
  }

  /**
   * Starts a worker process. On the cluster a worker that starts while the frontend is down exits at once (it cannot
   * connect), and a process supervisor would start it again: so does this, every 2 s for up to a minute.
   */
  private async spawn(role: string, crashAt?: string, extraEnv: Record<string, string> = {}): Promise<WorkerProcess> {
    const name = `${this.taskQueue}-${role}`;
    const real = this.setup.scenario.realServer;
    const start = () =>
      this.setup.stack.startWorker({
        name,
        ...(crashAt ? { crashAt } : {}),
        ...(real ? { entry: real.workerEntry } : {}),
        env: {
          ...this.setup.lane.env,
          ...this.setup.server?.env,
          ...real?.workerEnv,
          ...this.setup.approver.workerEnv,
          ...extraEnv,
          RETRYSAFE_TASK_QUEUE: this.taskQueue,
        },
        logFile: path.join(this.setup.logDir, `${name}.log`),
      });
    if (!this.setup.clusterFaults && !this.setup.retrySpawns) return start();
    const deadline = Date.now() + SUPERVISOR_RETRY_MS;
    for (;;) {
      try {
        return await start();
      } catch (err) {
        if (Date.now() >= deadline) throw err;
        await sleep(2_000);
      }
    }
  }
}

function harnessFailure(err: unknown): Tally {
  return {
    outcome: 'harness-error',
    expectedEffects: 0,
    actualEffects: 0,
    duplicates: 0,
    lost: 0,
    unknown: 0,
    needsReview: 0,
    unexplained: [`harness: ${(err as Error).message ?? String(err)}`],
  };
}
