import { spawnWatchdog } from '../../../../cli/dev/process-watchdog';
import { spawnWorker, type WorkerProcess } from '../../../lib/worker-process';
import type { PeerProviderUrls } from '../types';
import { PROVIDER_URLS_ENV, SYSTEM_DATABASE_URL_ENV } from './settings';

/** The DBOS service (service.ts) as a child process, like retrysafe's workers: tsx, its own PID, SIGKILL-able. */

export const SERVICE_ENTRY = 'scripts/bench/peers/dbos/service.ts';

export interface ServiceOptions {
  systemDatabaseUrl: string;
  providers: PeerProviderUrls;
  /** e.g. `after-commit:send-email`; absent starts a service that never crashes itself. */
  crashAt?: string;
  logFile: string;
}

export type ServiceExit = Awaited<WorkerProcess['exited']>;

export interface ServiceProcess {
  readonly pid: number;
  readonly crashAt: string | undefined;
  readonly exited: Promise<ServiceExit>;
  /** SIGTERM (DBOS shuts down), SIGKILL after 15 s; resolves once the process is gone. */
  stop(): Promise<void>;
  output(): string;
}

export async function startService(opts: ServiceOptions): Promise<ServiceProcess> {
  const worker = await spawnWorker({
    name: `dbos-service${opts.crashAt ? ` (crash at ${opts.crashAt})` : ''}`,
    entry: SERVICE_ENTRY,
    env: {
      [SYSTEM_DATABASE_URL_ENV]: opts.systemDatabaseUrl,
      [PROVIDER_URLS_ENV]: JSON.stringify(opts.providers),
      // Never inherit a crash spec from the bench's own environment.
      RETRYSAFE_CRASH_AT: '',
    },
    ...(opts.crashAt ? { crashAt: opts.crashAt } : {}),
    logFile: opts.logFile,
  });
  // Should the bench process die without stopping it, the watchdog stops the service (process-watchdog.ts).
  const watchdog = spawnWatchdog(worker.pid, 'SIGTERM');
  void worker.exited.then(() => watchdog.kill('SIGKILL'));
  return {
    pid: worker.pid,
    crashAt: opts.crashAt,
    exited: worker.exited,
    stop: () => worker.stop(),
    output: () => worker.output(),
  };
}
