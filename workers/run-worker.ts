/**
 * The body of a worker process: reads standard Temporal connection settings and retrysafe's own settings
 * from the environment, builds the worker with the application's tools, runs until SIGINT/SIGTERM, and
 * reports incomplete actions at start. An application's entry point is a few lines calling this (see
 * examples/worker.ts); a configuration error exits 2 with the variable named, before anything connects.
 */
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { WorkerConfig } from './config';
import type { Planner } from '../activities/planners/planner';
import type { AnyTool } from '../policies/tool';
import type { ToolRegistry } from '../policies/tool-registry';
import { createWorker, type CreateWorkerOptions, type WorkerTuning } from './create-worker';
import { StackSettingsMismatch } from '../client/stack-settings';
import { createLogger } from './logger';
import { installWorkerRuntime } from './runtime';
import { parseWorkerConfig } from './config';
import type { Tracing } from '../tracing/start-tracing';
import { startTracingFromEnv, TracingConfigError } from '../tracing/tracing-from-env';
import { reportIncompleteActions } from './recovery-report';
import { isSettingsError, retrysafeSettingsFromEnv, type RetrysafeEnvSettings } from './settings-from-env';
import { invalidConfigError } from '../policies/errors';

/**
 * What an entry point adds to the environment's settings: its tools, workflow module, activities, planner and tuning.
 */
export interface WorkerSetup {
  /** The tools this worker runs: the only place the engine learns of them. A malformed tool stops the worker. */
  tools: readonly AnyTool[] | ToolRegistry;
  /** The workflow module, re-exporting the engine's workflows beside the application's; the engine's alone if absent. */
  workflowsPath?: string;
  /** The application's own activities (reads, baselines), registered beside the engine's. */
  activities?: Record<string, (...args: never[]) => unknown>;
  /** The planner of agent runs, when this worker runs them. */
  planner?: Planner;
  /** The SDK's worker tuning (slots, cache size, pollers), passed to Worker.create as given. */
  tuning?: WorkerTuning;
}

/** Thrown by an entry point's setup for a bad setting; the process exits 2 with the message. */
export const SetupError = invalidConfigError('SetupError');

/**
 * Runs a whole worker process from the environment until SIGINT or SIGTERM. A bad setting exits 2 with one line naming
 * it, before anything connects.
 */
export async function runWorkerProcess(
  setup: (env: NodeJS.ProcessEnv, config: WorkerConfig) => WorkerSetup | Promise<WorkerSetup>,
): Promise<void> {
  const parent = parentWatch();
  let settings: RetrysafeEnvSettings;
  let options: WorkerSetup;
  let logger: ReturnType<typeof createLogger>;
  try {
    // The Runtime first (its logger, and the metrics endpoint, which may be taken): the settings find it installed.
    const early = parseWorkerConfig(process.env);
    logger = createLogger({ level: early.logLevel });
    installWorkerRuntime({ logger, ...(early.metricsAddress ? { metricsAddress: early.metricsAddress } : {}) });
    settings = await retrysafeSettingsFromEnv(process.env);
    options = await setup(process.env, settings.config);
  } catch (err) {
    if (isSettingsError(err) || err instanceof SetupError) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { config, dataConverter, ledger } = settings;
  if (config.metricsAddress) {
    process.stdout.write(
      `${JSON.stringify({ event: 'metrics', url: `http://${config.metricsAddress}/metrics`, pid: process.pid })}\n`,
    );
  }
  let tracing: Tracing | undefined;
  try {
    tracing = config.tracing ? await startTracingFromEnv(config.tracing, process.env) : undefined;
  } catch (err) {
    if (!(err instanceof TracingConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  const namespace = settings.namespace;
  const connection = await NativeConnection.connect(settings.connectionOptions);
  const worker = await createWorkerOrExit({
    connection,
    namespace,
    config,
    ...(settings.tenantPolicies ? { tenantPolicies: settings.tenantPolicies } : {}),
    operatorScopes: settings.operatorScopes,
    ...(dataConverter ? { dataConverter } : {}),
    ledger,
    ...(tracing ? { plugins: [tracing.plugin] } : {}),
    ...options,
    // Launchers bundle the workflow code once and share it, so a restarted worker is ready in about a second. A
    // tracing worker bundles its own: the workflow interceptors that trace go into the bundle when it is made.
    ...(process.env.RETRYSAFE_WORKFLOW_BUNDLE && !tracing
      ? { workflowBundle: { codePath: process.env.RETRYSAFE_WORKFLOW_BUNDLE } }
      : {}),
    onCrash: (point, operation) => process.stderr.write(`crash point ${point} (${operation})\n`),
  });
  await reportIncompleteActions(
    new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) }),
    logger,
  );
  process.stdout.write(
    `${JSON.stringify({ event: 'worker-ready', taskQueue: config.taskQueue, namespace, pid: process.pid })}\n`,
  );
  // The Runtime shuts the worker down gracefully on SIGINT / SIGTERM.
  parent.running(worker);
  try {
    await worker.run();
  } finally {
    parent.release();
  }
  await connection.close();
  await settings.close();
  await tracing?.shutdown();
}

/**
 * A worker the project's scripts spawn (RETRYSAFE_EXIT_WITH_PARENT=1, with an IPC channel) stops when that parent
 * goes away, killed or not, instead of polling on as an orphan: before it is ready it exits, once running it
 * shuts down as on SIGTERM. Other launchers, IPC or not, are left alone.
 */
function parentWatch() {
  const watching = process.env.RETRYSAFE_EXIT_WITH_PARENT === '1' && typeof process.send === 'function';
  let worker: { getState(): string; shutdown(): void } | undefined;
  const onGone = () => {
    if (!worker) process.exit(0);
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  // The channel may have closed already (the parent died while this process was starting).
  if (watching && !process.connected) process.exit(0);
  if (watching) process.once('disconnect', onGone);
  return {
    running(w: { getState(): string; shutdown(): void }) {
      worker = w;
      if (watching && !process.connected) onGone();
    },
    /** A listener on the channel keeps this process alive: removed once the worker has stopped. */
    release() {
      if (!watching) return;
      process.off('disconnect', onGone);
      process.channel?.unref();
    },
  };
}

/** createWorker, where a worker whose settings disagree with its stack's exits 2 with the one line that says so. */
async function createWorkerOrExit(options: CreateWorkerOptions) {
  try {
    return await createWorker(options);
  } catch (err) {
    if (!(err instanceof StackSettingsMismatch)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}

/** Runs `runWorkerProcess` as a process's main, exiting 1 with the stack on an unexpected failure. */
export function workerMain(
  setup: (env: NodeJS.ProcessEnv, config: WorkerConfig) => WorkerSetup | Promise<WorkerSetup>,
): void {
  runWorkerProcess(setup).catch((err) => {
    process.stderr.write(`worker failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
