/**
 * The body of a worker process: reads standard Temporal connection settings and retrysafe's own settings
 * from the environment, builds the worker with the application's tools, runs until SIGINT/SIGTERM, and
 * reports incomplete actions at start. An application's entry point is a few lines calling this (see
 * examples/worker.ts); a configuration error exits 2 with the variable named, before anything connects.
 */
import { LedgerConfigError, LedgerSchemaError, ledgerConfigFromEnv, openLedger, type ActionLedger } from '../ledger';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv, PayloadKeysError } from '../codec/codec-config';
import { parseWorkerConfig, ConfigError, type WorkerConfig } from './config';
import { connectWorker } from './connection';
import { createWorker, type CreateWorkerOptions } from './create-worker';
import { StackSettingsMismatch } from '../client/stack-settings';
import { createLogger, installRuntimeLogger } from './logger';
import { reportIncompleteActions } from './recovery-report';
import { loadTenantPolicyFile } from './tenant-policy-file';
import { OperatorsFileError, operatorScopesReader } from './operators-file';
import type { OperatorScopes } from '../policies/signed-decision';

export type WorkerSetup = Pick<CreateWorkerOptions, 'tools' | 'workflowsPath' | 'activities' | 'planner' | 'tuning'>;

/** Thrown by an entry point's setup for a bad setting; the process exits 2 with the message. */
export class SetupError extends Error {
  override name = 'SetupError';
}

export async function runWorkerProcess(
  setup: (env: NodeJS.ProcessEnv, config: WorkerConfig) => WorkerSetup | Promise<WorkerSetup>,
): Promise<void> {
  const parent = parentWatch();
  let config: WorkerConfig;
  let tenantPolicies;
  let operatorScopes: OperatorScopes | (() => Promise<OperatorScopes>) | undefined;
  let options: WorkerSetup;
  let dataConverter: DataConverter | undefined;
  let ledger: ActionLedger | undefined;
  try {
    config = parseWorkerConfig(process.env);
    // Payload encryption (RETRYSAFE_PAYLOAD_KEYS_FILE / RETRYSAFE_PAYLOAD_KEYS): a bad key set stops the worker here.
    dataConverter = dataConverterFromEnv(process.env);
    options = await setup(process.env, config);
    // The durable ledger (RETRYSAFE_LEDGER): opened and migrated now; a schema newer than this code stops the worker.
    const ledgerConfig = ledgerConfigFromEnv(process.env);
    if (ledgerConfig) ledger = await openLedger(ledgerConfig);
    // An invalid policy file stops the worker here, naming the file and the field.
    if (config.tenantPolicyFile) tenantPolicies = await loadTenantPolicyFile(config.tenantPolicyFile);
    // The operators file is read now (a bad one stops the worker, naming the field) and again on every
    // policy load, so an operator added or narrowed later counts without a restart. Inline scopes win.
    if (config.operatorsFile) {
      const file = config.operatorsFile;
      const inline = config.operatorScopes;
      const read = operatorScopesReader(file);
      await read();
      operatorScopes = async () => ({ ...(await read()), ...inline });
    }
  } catch (err) {
    if (
      err instanceof ConfigError ||
      err instanceof OperatorsFileError ||
      err instanceof SetupError ||
      err instanceof PayloadKeysError ||
      err instanceof LedgerSchemaError ||
      err instanceof LedgerConfigError ||
      (err as { name?: string }).name === 'PlannerConfigError' ||
      (err as { code?: string }).code === 'InvalidTool'
    ) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  installRuntimeLogger(logger);
  const { connection, namespace } = await connectWorker();
  const worker = await createWorkerOrExit({
    connection,
    namespace,
    config,
    tenantPolicies,
    ...(operatorScopes ? { operatorScopes } : {}),
    ...(dataConverter ? { dataConverter } : {}),
    ...(ledger ? { ledger } : {}),
    ...options,
    // Launchers bundle the workflow code once and share it, so a restarted worker is ready in about a second.
    ...(process.env.RETRYSAFE_WORKFLOW_BUNDLE
      ? { workflowBundle: { codePath: process.env.RETRYSAFE_WORKFLOW_BUNDLE } }
      : {}),
    onCrash: (point, operation) => process.stderr.write(`crash point ${point} (${operation}): SIGKILL\n`),
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
  await ledger?.close();
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
export function workerMain(setup: Parameters<typeof runWorkerProcess>[0]): void {
  runWorkerProcess(setup).catch((err) => {
    process.stderr.write(`worker failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
