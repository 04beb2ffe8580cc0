import type { Client } from '@temporalio/client';
import type { ExampleClient } from '../../examples/client';
import type { Fault, ProviderKind, SandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { ExampleServer } from '../lib/example-servers';
import type { Stack } from '../lib/stack';
import type { Approver } from './approvals';
import type { AnyTool } from 'retrysafe';

/**
 * The vocabulary of the chaos harness: crash modes, iteration plans, scenarios and what an iteration
 * counts at the providers. A scenario is data (what to crash, which faults it tolerates) plus two
 * functions (start the work, count its effects); the harness owns workers, crashes and restarts.
 */

/**
 * Where the worker dies. The first four are the dangerous points of one provider call:
 *   before-send    the executor is about to POST (nothing reached the provider)
 *   in-flight      the provider committed and holds its reply; the harness SIGKILLs the worker
 *   after-commit   the reply arrived; the worker dies before the outcome is recorded
 *   before-lookup  an ambiguous failure sent the executor to look the effect up; it dies first
 *   gateway-error  the provider committed and answered 502 or 504 (a gateway gave up on its reply); the worker
 *                  dies right after hearing it
 * Four more are points of the record-first path, where a run acts on the action's ledger row (runs only):
 *   after-row-claimed   the run's act holds the row, nothing sent
 *   before-row-settles  the executor has its verdict (the provider committed); the worker dies before the row has it
 *   after-row-settled   the row has the verdict; the worker dies before the run's workflow task records the act (a
 *                       local activity: the act runs again with the task and must find the settled row)
 *   stalled-owner       the run's act holds the row and the worker stops (SIGSTOP) there past its heartbeat timeout,
 *                       so another attempt takes the row over; then it is continued (SIGCONT), runs into the row's
 *                       fence, and is killed
 * random-time kills at a seeded delay after the work starts, wherever the worker happens to be
 * (workflow task, claim, dispatch, reconciliation).
 */
export const CRASH_MODES = [
  'before-send',
  'in-flight',
  'after-commit',
  'before-lookup',
  'gateway-error',
  'random-time',
  'after-row-claimed',
  'before-row-settles',
  'after-row-settled',
  'stalled-owner',
] as const;
export type CrashMode = (typeof CRASH_MODES)[number];

export type Weighted<T> = ReadonlyArray<readonly [T, number]>;

/** What `--target cluster` kills besides the worker: one of the real server's services, or its database. */
export const CLUSTER_FAULT_TARGETS = ['history', 'matching', 'frontend', 'postgres'] as const;
export type ClusterFaultTarget = (typeof CLUSTER_FAULT_TARGETS)[number];

/**
 * The cluster fault of one iteration. At the iteration's crash point the target is killed (SIGKILL for a service,
 * `pg_ctl stop -m immediate` for PostgreSQL) and started again `downMs` later. With `spareWorker` the worker is
 * left running through it, so the service dies under a live worker; otherwise both die at the same moment. Only
 * points the harness reaches itself (in-flight, random-time) can spare the worker: at the others the worker's own
 * crash hook ends it.
 */
export interface ClusterFaultPlan {
  target: ClusterFaultTarget;
  spareWorker: boolean;
  downMs: number;
}

/** What happened to the planned cluster fault. */
export interface ClusterFaultRecord {
  target: ClusterFaultTarget;
  /** The worker lived through it. */
  spareWorker: boolean;
  /** The exit signal of the killed process (SIGKILL for a service; PostgreSQL's postmaster exits on its own). */
  signal: NodeJS.Signals | null;
  /** Milliseconds from the start of the work to the kill; later than the point when another kill held the cluster. */
  atMs: number;
  /** How long after the crash point the kill came (waiting for the kill ahead of it); set by the iteration. */
  afterPointMs?: number;
  /** Killed until started again, as planned. */
  downMs: number;
  /** From the restart until a probe through frontend, history and matching succeeded. */
  recoveryMs: number;
  /** Set when the kill or the restart failed. */
  error?: string;
}

/** A before-commit fault family the plan may draw (the provider answers before it commits). */
export type FaultChoice = 'none' | 'status-5xx' | 'status-429' | 'reset' | 'delay';

export interface IterationPlan {
  index: number;
  scenario: string;
  /** This iteration's own stream, derived from the run's seed and the index. */
  seed: number;
  operation: string;
  /** The sandbox provider and operation the crash points target; absent on a real server (no faults there). */
  provider?: ProviderKind;
  providerOp?: string;
  /** `stallMs`: how long a stalled owner stays stopped before it is continued. */
  crash: { mode: CrashMode; delayMs?: number; holdMs?: number; stallMs?: number };
  /** Armed on the lane's provider, in order (the oldest matching fault strikes first). */
  faults: Fault[];
  readLagMs: number;
  /** A decline is among the faults: the action fails for business reasons and nothing may be left behind. */
  declined: boolean;
  /** The dev server is restarted on its SQLite file while this iteration's batch recovers. */
  serverRestart: boolean;
  /** How long after the crash the successor worker is started. */
  successorDelayMs: number;
  /** With `--target cluster`: the service or database killed at the crash point as well. */
  clusterFault?: ClusterFaultPlan;
  /** With `--faults`: the iteration's one fault (a worker-kill keeps the crash above; any other replaces it). */
  fault?: FaultPlan;
}

/** What one iteration found at the providers and in Temporal. */
export interface Tally {
  /** A short word for the end state: renewed, confirmed, needs_review, compensated, … */
  outcome: string;
  expectedEffects: number;
  actualEffects: number;
  duplicates: number;
  lost: number;
  /** Actions left in `unknown` / `needs_review` at the end of the iteration. */
  unknown: number;
  needsReview: number;
  /** Anything the scenario did not predict: each entry is a reason. */
  unexplained: string[];
  /** Extra facts for the failure report (keys, ledger ids). */
  notes?: string[];
  /** The durable ledger's rows for this iteration, and those out of step with the providers. */
  ledgerRows?: number;
  ledgerOutOfStep?: number;
}

export interface IterationContext {
  stack: Stack;
  client: Client;
  /** Bound to this iteration's task queue: claims and runs land on this iteration's workers only. */
  retrysafe: ExampleClient;
  taskQueue: string;
  /** Providers for this iteration: the lane's own processes for faulted kinds, the stack's for the rest. */
  providers: Record<ProviderKind, SandboxProvider>;
  plan: IterationPlan;
  tenant: string;
  eventId: string;
  /** Signs approvals the workers trust, for actions the decision table sends to confirmation. */
  approver: Approver;
  /** Aborted when the iteration's deadline passes: stop polling and let verify() report where things stood. */
  signal: AbortSignal;
  /** A real-server scenario's server, started once for the run. */
  server?: ExampleServer;
  /**
   * What the harness saw happen to the iteration so far (the kill it observed, the fault it injected), as opposed to
   * what the plan asked for: a scenario's expectations read this, never the plan's crash mode or fault.
   */
  observed(): ObservedDisturbance;
}

/** What struck an iteration, as the harness observed it (each absent when nothing of the kind happened). */
export interface ObservedDisturbance {
  crash?: CrashRecord;
  fault?: FaultRecord;
}

/** Work in progress. `settled` resolves when the work reached the state the scenario waits for. */
export interface StartedWork {
  settled: Promise<void>;
  /** Counts effects at the providers; called once `settled` resolved or the iteration's deadline passed. */
  verify(): Promise<Tally>;
}

export interface ScenarioVariant {
  start(ctx: IterationContext): StartedWork;
}

export interface ChaosScenario {
  name: string;
  summary: string;
  /** The operation whose provider call the crash points target. */
  operation: string;
  /** Provider kinds whose faults this scenario arms; each lane has its own process of each (see lanes.ts). */
  providers: readonly ProviderKind[];
  modes: Weighted<CrashMode>;
  /** Before-commit fault families this scenario's expectations hold under. */
  faultPool: Weighted<FaultChoice>;
  /** Probability of a dropped reply after the commit (drop-after-commit), where the mode allows one. */
  dropChance: number;
  /** Probability of a declined request, drawn only for before-send crashes (the only mode where it is clean). */
  declineChance: number;
  /** Provider read lag range; the top must stay inside the tool contract's readAfterWriteLagMs. */
  readLagMs: readonly [number, number];
  /**
   * Range of random-time kills, from the start of the work. The default suits a target reached within a
   * second or two; a scenario whose target step comes later (a compensation) reaches further.
   */
  randomKillMs?: readonly [number, number];
  /** Called before each iteration on the iteration's providers (e.g. turn webhooks off). */
  prepare?(providers: Record<ProviderKind, SandboxProvider>): Promise<void>;
  retrysafe: ScenarioVariant;
  /** The same plan on bare Temporal (`--baseline`), where the scenario has one. */
  baseline?: ScenarioVariant;
  /**
   * A scenario on a real server instead of the sandbox providers: the server is started once for the run, its
   * tool's own worker entry runs every worker of the scenario (both variants), and the plan reads the tool's
   * contract from `tool`. Only the points a worker reaches itself, and random-time kills, apply there.
   */
  realServer?: RealServerSpec;
}

export interface RealServerSpec {
  /** The tool as the plan reads its contract (built with placeholder settings; never called). */
  tool: AnyTool;
  /** The worker entry of the tool's example, which also registers the bare baseline (bareTool). */
  workerEntry: string;
  /** Extra worker environment on top of the server's (a contract switch). */
  workerEnv?: Record<string, string>;
  start(log: (line: string) => void): Promise<ExampleServer>;
}

export type Variant = 'retrysafe' | 'baseline';

export interface CrashRecord {
  mode: CrashMode;
  pid: number;
  /** The exit signal observed; SIGKILL for a real crash. */
  signal: NodeJS.Signals | null;
  /** False when the armed point was never reached and the harness killed the worker itself. */
  pointReached: boolean;
  /** Milliseconds from the start of the work to the kill (to the point, when the worker was spared). */
  atMs: number;
  /** The plan's cluster fault spared the worker: it was not killed, and `signal` is the killed service's. */
  workerSpared?: boolean;
}

export interface IterationResult {
  index: number;
  scenario: string;
  variant: Variant;
  eventId: string;
  taskQueue: string;
  plan: IterationPlan;
  crash?: CrashRecord;
  clusterFault?: ClusterFaultRecord;
  /** With `--faults`, for a kind other than worker-kill: what happened to the fault. */
  fault?: FaultRecord;
  tally: Tally;
  durationMs: number;
  /** Milliseconds from the iteration's start to each step, for seeing where the time goes. */
  timeline: Partial<Record<'doomedReady' | 'crashed' | 'successorReady' | 'settled' | 'verified', number>>;
}

/**
 * `npm run chaos -- --faults KIND[,KIND…]|all`: each iteration injects one fault drawn by the seed, at the moment
 * the provider has committed the iteration's request and holds its reply (the point where a request arrived and its
 * answer did not yet):
 *
 *   worker-kill         SIGKILL of the worker at the crash point the plan draws (the harness's crash modes)
 *   worker-pause        SIGSTOP of the worker past the row's lease (another worker takes the row), then SIGCONT: it
 *                       wakes into the row's fence and lives on
 *   provider-reset      toxiproxy resets the connection as the provider's reply comes back (reset_peer downstream)
 *   provider-timeout    toxiproxy withholds the reply, then closes the connection without it (timeout downstream)
 *                       (both toxics are on the provider's proxy only from the held reply until it went out)
 *   temporal-partition  toxiproxy cuts the lane's workers off the Temporal frontend for seconds, then heals
 *   ledger-partition    toxiproxy cuts the lane's workers off the ledger (PostgreSQL: the run keeps its ledger there
 *                       when this kind is drawn) for seconds, then heals: the reply comes back into the cut
 *   server-restart      the Temporal server restarts while the reply is held (every lane's workers reconnect)
 *   clock-skew          beside the live holder, a second worker on its task queue whose lease clock runs a whole
 *                       lease ahead (RETRYSAFE_LEASE_CLOCK_OFFSET_MS): every run act's lease has ended by its clock
 */
export const FAULT_KINDS = [
  'worker-kill',
  'worker-pause',
  'provider-reset',
  'provider-timeout',
  'server-restart',
  'temporal-partition',
  'ledger-partition',
  'clock-skew',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What the plan of one iteration carries about its fault (absent without --faults). */
export interface FaultPlan {
  kind: FaultKind;
  /** How long the provider holds its committed reply (the fault's moment). */
  holdMs?: number;
  /** worker-pause: how long the worker stays stopped; temporal- and ledger-partition: how long the cut lasts. */
  durationMs?: number;
  /** clock-skew: how far ahead the second worker's lease clock runs. */
  skewMs?: number;
}

/** What happened to the planned fault. */
export interface FaultRecord {
  kind: FaultKind;
  /** The provider committed and the fault was injected at that moment. */
  injected: boolean;
  /** Milliseconds from the start of the work to the injection. */
  atMs: number;
  /** A partition's: milliseconds from the start of the work to the heal. */
  healedAtMs?: number;
  /** A partition's: from the heal until the work settled (negative when it settled during the cut). */
  settledAfterHealMs?: number;
  /**
   * The worker that held the work exited on its own before the harness stopped it (before or during a pause, or any
   * time before the iteration ended), and how it ended.
   */
  workerExited?: string;
  /**
   * That exit was a clean one (code 0, no signal) after the work had settled: a note, not a failure. A crash, a kill
   * the harness never sent, or leaving while the work was open counts as unexplained.
   */
  workerExitExplained?: boolean;
  detail?: string;
}
