/**
 * A worker process: `npm run worker`. Reads standard Temporal connection settings and retrysafe's own
 * settings from the environment, runs until SIGINT/SIGTERM, and reports incomplete actions at start.
 */
import { parseWorkerConfig, ConfigError } from './config';
import { connectWorker } from './connection';
import { createWorker } from './create-worker';
import { createLogger, installRuntimeLogger } from './logger';
import { reportIncompleteActions } from './recovery-report';
import { loadTenantPolicyFile } from './tenant-policy-file';
import { plannerFromEnv } from '../activities/planners/from-env';
import { PlannerConfigError } from '../activities/planners/openai-compatible-planner';
import { Client } from '@temporalio/client';

async function main(): Promise<void> {
  let config;
  let tenantPolicies;
  let planner;
  try {
    config = parseWorkerConfig(process.env);
    planner = plannerFromEnv(process.env);
    // An invalid policy file stops the worker here, naming the file and the field.
    if (config.tenantPolicyFile) tenantPolicies = await loadTenantPolicyFile(config.tenantPolicyFile);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof PlannerConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  installRuntimeLogger(logger);
  const { connection, namespace } = await connectWorker();
  const worker = await createWorker({
    connection,
    namespace,
    config,
    tenantPolicies,
    planner,
    // Launchers bundle the workflow code once and share it, so a restarted worker is ready in about a second.
    ...(process.env.RETRYSAFE_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.RETRYSAFE_WORKFLOW_BUNDLE } } : {}),
    onCrash: (point, operation) => process.stderr.write(`crash point ${point} (${operation}): SIGKILL\n`),
  });
  await reportIncompleteActions(new Client({ connection, namespace }), logger);
  process.stdout.write(`${JSON.stringify({ event: 'worker-ready', taskQueue: config.taskQueue, namespace, pid: process.pid })}\n`);
  // The Runtime shuts the worker down gracefully on SIGINT / SIGTERM.
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
