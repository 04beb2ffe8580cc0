import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startPostgres, type PostgresServer } from '../../../lib/postgres-server';
import type { PeerStartOptions, PeerSystem, StartPeer } from '../types';
import { connectBenchClient, type BenchClient } from './client';
import { workflowIdFor } from './intents';
import { startService, type ServiceExit, type ServiceProcess } from './service-process';

/**
 * The bench's DBOS Transact peer: a throw-away PostgreSQL as DBOS's system database, the DBOS application in a
 * service process of its own (service.ts), and DBOSClient in the bench process enqueueing onto its queue.
 */

/** How long a crash-spec'd service may take to reach its crash point once the workflow is enqueued. */
const CRASH_TIMEOUT_MS = 30_000;
/** One operation past this is stuck (the service gone, a workflow never dequeued), not slow. */
const RESULT_TIMEOUT_MS = 60_000;

/** How each service process this peer started ended, in order, for the caller to check (e.g. a SIGKILL). */
export interface ServiceEnd extends ServiceExit {
  pid: number;
  crashAt: string | undefined;
}

export interface DbosPeer extends PeerSystem {
  readonly serviceEnds: readonly ServiceEnd[];
  /** The running service's PID. */
  readonly servicePid: number;
}

export const startDbosPeer: StartPeer = (opts) => startDbos(opts);

export async function startDbos(opts: PeerStartOptions): Promise<DbosPeer> {
  // startPostgres keeps its cluster in a temporary folder of its own (beside workDir) and deletes it on stop.
  const pg = await startPostgres({ log: opts.log });
  let client: BenchClient | undefined;
  let service: ServiceProcess | undefined;
  const serviceEnds: ServiceEnd[] = [];
  try {
    const systemDatabaseUrl = await pg.createDatabase('dbos_bench');
    const version = `DBOS Transact ${dbosSdkVersion()} (@dbos-inc/dbos-sdk), PostgreSQL ${await serverVersion(pg)}`;
    const logFile = path.join(opts.workDir, 'dbos-service.log');

    const launch = async (crashAt?: string): Promise<ServiceProcess> => {
      const started = await startService({ systemDatabaseUrl, providers: opts.providers, logFile, crashAt });
      void started.exited.then((exit) => serviceEnds.push({ ...exit, pid: started.pid, crashAt }));
      opts.log(`dbos: service ${started.pid} ready${crashAt ? ` (crash at ${crashAt})` : ''}`);
      return started;
    };
    client = await connectBenchClient(systemDatabaseUrl);
    const bench = client;
    service = await launch();

    const run = async <W extends 'charge' | 'renewal'>(workflow: W, workflowID: string, input: unknown) => {
      const handle = await bench.start(workflow, workflowID, input);
      return withTimeout(bench.result(handle), RESULT_TIMEOUT_MS, `dbos: ${workflowID} gave no result`);
    };

    let stopped: Promise<void> | undefined;
    return {
      name: 'dbos',
      version,
      serviceEnds,
      get servicePid() {
        return service?.pid ?? -1;
      },
      charge: (input) => run('charge', workflowIdFor.charge(input), input),
      renewal: (input) => run('renewal', workflowIdFor.renewal(input), input),

      async crashAfterCommit(input) {
        const crashAt = `after-commit:${input.target}`;
        await service?.stop();
        const crashing = (service = await launch(crashAt));
        try {
          const handle = await bench.start('crash', workflowIdFor.crash(input), input);
          const result = bench.result(handle);
          // A workflow that already finished (the same event again) never reaches the step, so nothing crashes.
          const first = await withTimeout(
            Promise.race([crashing.exited.then((exit) => ({ exit })), result.then(() => ({ exit: undefined }))]),
            CRASH_TIMEOUT_MS,
            `dbos: the service with ${crashAt} neither crashed nor finished ${handle.workflowID}`,
          );
          if (first.exit && first.exit.signal !== 'SIGKILL') {
            throw new Error(`dbos: the service with ${crashAt} exited ${JSON.stringify(first.exit)}, not by SIGKILL`);
          }
          opts.log(`dbos: service ${crashing.pid} ${first.exit ? 'killed itself' : 'did not crash'}; restarting`);
          await crashing.stop();
          // Launch recovers the PENDING workflow: same executor ID and application version (settings.ts).
          service = await launch();
          await withTimeout(result, RESULT_TIMEOUT_MS, `dbos: ${handle.workflowID} was not recovered`);
        } finally {
          // Whatever failed, later calls must not run on a service that kills itself.
          if (service === crashing) {
            await crashing.stop();
            service = await launch();
          }
        }
      },

      stop() {
        stopped ??= (async () => {
          await client?.destroy();
          await service?.stop();
          await pg.stop();
        })();
        return stopped;
      },
    };
  } catch (err) {
    await client?.destroy().catch(() => undefined);
    await service?.stop();
    await pg.stop();
    throw err;
  }
}

function dbosSdkVersion(): string {
  // The package exports no ./package.json; its main file is dist/src/index.js.
  const root = path.resolve(path.dirname(require.resolve('@dbos-inc/dbos-sdk')), '..', '..');
  return (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

async function serverVersion(pg: PostgresServer): Promise<string> {
  const db = new PgClient({ connectionString: pg.url });
  await db.connect();
  try {
    return (await db.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  } finally {
    await db.end();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
