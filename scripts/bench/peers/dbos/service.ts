/**
 * The DBOS application of the bench's DBOS peer, in a process of its own (started by service-process.ts): it
 * registers the workflows, launches DBOS on the system database (which recovers the workflows a killed
 * predecessor left PENDING), registers the queue the bench enqueues onto, and says `worker-ready` on stdout.
 * RETRYSAFE_CRASH_AT (activities/crash-points.ts) makes it SIGKILL itself at a step's dangerous point.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { exampleTools } from '../../../../examples/tools';
import type { PeerProviderUrls } from '../types';
import {
  APP_NAME,
  APP_VERSION,
  EXECUTOR_ID,
  POLLING_MS,
  PROVIDER_URLS_ENV,
  QUEUE_NAME,
  SYSTEM_DATABASE_URL_ENV,
} from './settings';
import { registerBenchWorkflows } from './workflows';
import { createToolRegistry } from 'retrysafe';
import { killAt, parseCrashSpecs } from 'retrysafe/testing';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const systemDatabaseUrl = requiredEnv(SYSTEM_DATABASE_URL_ENV);
  const providers = JSON.parse(requiredEnv(PROVIDER_URLS_ENV)) as PeerProviderUrls;
  const crashAt = process.env.RETRYSAFE_CRASH_AT;
  // The line is the last thing this process writes: the bench's log then shows where it died.
  const crash = killAt(parseCrashSpecs(crashAt), (point, operation) =>
    console.log(JSON.stringify({ event: 'crash', point, operation, pid: process.pid })),
  );

  registerBenchWorkflows(createToolRegistry(exampleTools(providers)), crash);
  DBOS.setConfig({
    name: APP_NAME,
    systemDatabaseUrl,
    applicationVersion: APP_VERSION,
    executorID: EXECUTOR_ID,
    logLevel: process.env.DBOS_LOG_LEVEL ?? 'info',
  });
  await DBOS.launch();
  // After launch (the queue lives in the system database). The bench's client registered it already, so the
  // dispatcher polls it from launch on; registering it here too keeps the service complete on its own.
  await DBOS.registerQueue(QUEUE_NAME, { minPollingIntervalMs: POLLING_MS, onConflict: 'always_update' });

  process.once('SIGTERM', () => {
    void DBOS.shutdown().finally(() => process.exit(0));
  });
  console.log(
    JSON.stringify({
      event: 'worker-ready',
      pid: process.pid,
      executorID: DBOS.executorID,
      applicationVersion: DBOS.applicationVersion,
      crashAt: crashAt || null,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
