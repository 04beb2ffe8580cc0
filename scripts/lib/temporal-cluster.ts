import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

import { resolveTemporalServer, type ResolvedTemporalServer } from '../toolchain/resolve-temporal-server';
import {
  CLUSTER_DATABASES,
  CLUSTER_SERVICES,
  DYNAMIC_CONFIG_FILE,
  NAMESPACE_RETENTION_HOURS,
  SQL_PLUGIN,
  schemaSteps,
  serverConfig,
  type ClusterPorts,
  type ClusterService,
} from './cluster-config';
import { assertSearchAttributesRegistered } from '../../cli/dev/dev-server';
import { getFreePorts } from '../../cli/dev/free-port';
import { startPostgres, type PostgresServer } from './postgres-server';
import { childLog, type ChildLog } from '../../cli/dev/child-log';
import { spawnWatchdog } from '../../cli/dev/process-watchdog';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from 'retrysafe';

/**
 * The real Temporal server as a cluster on this machine: PostgreSQL, then the frontend, history, matching and
 * internal-worker services, each its own process, on loopback and free ports, in a throw-away folder. Used by
 * `npm run cluster`, the cluster tests and `npm run chaos -- --target cluster`, which kill single services and
 * the database and start them again.
 */
export interface TemporalCluster {
  /** The frontend's gRPC address, `127.0.0.1:<port>`: what TEMPORAL_ADDRESS is set to. */
  address: string;
  namespace: string;
  /** No Web UI runs with the cluster. */
  uiUrl?: undefined;
  /** Config, logs (`logs/<service>.log`); the database lives in `postgres.dataDir`. */
  dataDir: string;
  postgres: PostgresServer;
  binaries: ResolvedTemporalServer;
  ports: ClusterPorts;
  /** Milliseconds from the call until the namespace served (binaries resolved, database and schemas included). */
  startupMs: number;
  /** The pid of a service's current process; -1 while it is not running. */
  pid(service: ClusterService): number;
  /** Kills a service (SIGKILL unless told), waits until the process is gone, and says how it ended. */
  kill(service: ClusterService, signal?: NodeJS.Signals): Promise<NodeJS.Signals | null>;
  /** Starts a stopped service again on its ports and waits until the cluster answers through it. */
  startService(service: ClusterService): Promise<void>;
  /** Resolves once the frontend, history and matching all answer (a probe workflow started and terminated). */
  waitUntilServing(timeoutMs?: number): Promise<void>;
  /** Every service stopped and started again, one after the other (what a rolling restart does). */
  restart(): Promise<void>;
  /** Stops every service and the database and deletes the folders. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  namespace?: string;
  log?: (msg: string) => void;
  /** Build the server from the Go module proxy when no binary is found; default true (minutes, once). */
  build?: boolean;
  /** How long to wait for the cluster to serve the namespace; default 120 s. */
  readyTimeoutMs?: number;
  /** The server's log level; default warn. */
  logLevel?: string;
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 120_000;
/** A restarted service rejoins the membership ring and takes its shards back; this has taken seconds here. */
const SERVICE_READY_TIMEOUT_MS = 90_000;
const LOG_TAIL_CHARS = 6_000;
const STOP_GRACE_MS = 3_000;

export async function startCluster(opts: StartClusterOptions = {}): Promise<TemporalCluster> {
  const started = Date.now();
  const log = opts.log ?? (() => undefined);
  const namespace = opts.namespace ?? 'default';
  const binaries = await resolveTemporalServer({ build: opts.build ?? true, log });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-cluster-'));
  // Deletes the folder if this process dies without teardown (each service and PostgreSQL have their own).
  const guard = spawnWatchdog(0, 'SIGTERM', { remove: [dataDir] });
  const services = new Map<ClusterService, ServiceProcess>();
  let postgres: PostgresServer | undefined;
  let connection: Connection | undefined;
  const teardown = async () => {
    for (const service of services.values()) service.retire();
    await Promise.all([...services.values()].map((s) => s.stop()));
    await connection?.close().catch(() => undefined);
    await postgres?.stop();
    await rm(dataDir, { recursive: true, force: true });
    guard.kill('SIGKILL');
  };
  try {
    postgres = await startPostgres({ crashSafe: true, maxConnections: 120, log });
    log(`cluster: PostgreSQL on ${postgres.host}:${postgres.port} in ${postgres.startupMs} ms`);
    await createSchemas(binaries.sqlTool, postgres, dataDir);
    log('cluster: persistence and visibility schemas in place');

    const free = await getFreePorts(2 * CLUSTER_SERVICES.length + 1, HOST);
    const ports: ClusterPorts = {
      grpc: Object.fromEntries(CLUSTER_SERVICES.map((s, i) => [s, free[i]])) as Record<ClusterService, number>,
      membership: Object.fromEntries(CLUSTER_SERVICES.map((s, i) => [s, free[CLUSTER_SERVICES.length + i]])) as Record<
        ClusterService,
        number
      >,
      frontendHttp: free[2 * CLUSTER_SERVICES.length],
    };
    const configFile = path.join(dataDir, 'config', 'retrysafe.yaml');
    await mkdir(path.dirname(configFile), { recursive: true });
    await mkdir(path.join(dataDir, 'logs'));
    const config = serverConfig({
      ports,
      postgres: { host: postgres.host, port: postgres.port, user: 'postgres' },
      dynamicConfigFile: DYNAMIC_CONFIG_FILE,
      ...(opts.logLevel ? { logLevel: opts.logLevel } : {}),
    });
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);

    for (const service of CLUSTER_SERVICES) {
      services.set(
        service,
        new ServiceProcess(service, binaries.server, configFile, path.join(dataDir, 'logs', `${service}.log`)),
      );
    }
    // The frontend first: on an empty database the first service to start writes the cluster's metadata, and
    // services starting at the same moment race for that write ("failed to initialize current cluster metadata",
    // seen here). Once the frontend answers, the other three start together.
    const address = `${HOST}:${ports.grpc.frontend}`;
    await services.get('frontend')!.launch();
    connection = await connectWhenUp(address, opts.readyTimeoutMs ?? READY_TIMEOUT_MS, services);
    await Promise.all([...services.values()].filter((s) => s.name !== 'frontend').map((s) => s.launch()));
    await ensureNamespace(connection, namespace, opts.readyTimeoutMs ?? READY_TIMEOUT_MS, services);
    const conn = connection;
    const waitUntilServing = (timeoutMs = SERVICE_READY_TIMEOUT_MS) => probe(conn, namespace, timeoutMs, services);
    await waitUntilServing(opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
    const startupMs = Date.now() - started;
    log(`cluster: ${CLUSTER_SERVICES.join(', ')} serving namespace ${namespace} at ${address} in ${startupMs} ms`);

    const pg = postgres;
    const service = (name: ClusterService) => services.get(name)!;
    let stopped: Promise<void> | undefined;
    return {
      address,
      namespace,
      dataDir,
      postgres: pg,
      binaries,
      ports,
      startupMs,
      pid: (name) => service(name).pid,
      kill: (name, signal = 'SIGKILL') => service(name).kill(signal),
      async startService(name) {
        await service(name).launch();
        await waitUntilServing();
      },
      waitUntilServing,
      async restart() {
        for (const name of CLUSTER_SERVICES) {
          await service(name).stop();
          await service(name).launch();
        }
        await waitUntilServing();
      },
      stop() {
        stopped ??= teardown();
        return stopped;
      },
    };
  } catch (err) {
    const tails = [...services.values()].map((s) => s.describe()).join('\n');
    await teardown();
    throw new Error(`${(err as Error).message}${tails ? `\n${tails}` : ''}`);
  }
}

/** Both databases created and brought to the schema version the SQL tool carries. */
async function createSchemas(sqlTool: string, postgres: PostgresServer, dataDir: string): Promise<void> {
  const connect = ['--plugin', SQL_PLUGIN, '--ep', postgres.host, '-p', String(postgres.port), '-u', 'postgres'];
  for (const { database, schemaName } of CLUSTER_DATABASES) {
    for (const step of schemaSteps(database, schemaName)) {
      await runTool(sqlTool, [...connect, ...step], dataDir);
    }
  }
}

function runTool(file: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-LOG_TAIL_CHARS)));
    }
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(file)} ${args.slice(-4).join(' ')} exited ${code}:\n${output.trim()}`));
    });
  });
}

async function connectWhenUp(
  address: string,
  timeoutMs: number,
  services: Map<ClusterService, ServiceProcess>,
): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no attempt yet';
  while (Date.now() < deadline) {
    assertRunning(services);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await connection.withDeadline(Date.now() + 3000, () => connection.workflowService.getSystemInfo({}));
        return connection;
      } catch (err) {
        await connection.close();
        throw err;
      }
    } catch (err) {
      last = (err as Error).message;
      await sleep(250);
    }
  }
  throw new Error(`cluster frontend at ${address} did not answer within ${timeoutMs} ms (last: ${last})`);
}

/** The namespace with a week's retention and retrysafe's search attributes (on SQL visibility, per namespace). */
async function ensureNamespace(
  connection: Connection,
  namespace: string,
  timeoutMs: number,
  services: Map<ClusterService, ServiceProcess>,
): Promise<void> {
  const retention = msToTs(NAMESPACE_RETENTION_HOURS * 3600 * 1000);
  await untilOk(timeoutMs, services, `registering namespace ${namespace}`, async () => {
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: retention });
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
    await connection.workflowService.describeNamespace({ namespace });
  });
  const { IndexedValueType } = temporal.api.enums.v1;
  const searchAttributes = Object.fromEntries(
    SEARCH_ATTRIBUTE_REGISTRATIONS.map(({ name, type }) => [
      name,
      type === 'KeywordList'
        ? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
        : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    ]),
  );
  await untilOk(timeoutMs, services, `registering search attributes on ${namespace}`, async () => {
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
    await assertSearchAttributesRegistered(connection, namespace);
  });
}

/** A probe through all three serving services: start a workflow (frontend, history) and describe its queue (matching). */
async function probe(
  connection: Connection,
  namespace: string,
  timeoutMs: number,
  services: Map<ClusterService, ServiceProcess>,
): Promise<void> {
  await untilOk(timeoutMs, services, 'probing the cluster', async () => {
    const workflowId = `retrysafe-cluster-probe-${randomUUID()}`;
    const taskQueue = { name: 'retrysafe-cluster-probe' };
    await connection.workflowService.startWorkflowExecution({
      namespace,
      workflowId,
      workflowType: { name: 'probe' },
      taskQueue,
      requestId: randomUUID(),
      identity: 'retrysafe-cluster',
      // Closes on its own should the terminate below not get through.
      workflowExecutionTimeout: msToTs(60_000),
    });
    await connection.workflowService.terminateWorkflowExecution({
      namespace,
      workflowExecution: { workflowId },
      reason: 'cluster probe',
    });
    await connection.workflowService.describeTaskQueue({ namespace, taskQueue });
  });
}

async function untilOk(
  timeoutMs: number,
  services: Map<ClusterService, ServiceProcess>,
  what: string,
  attempt: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no attempt yet';
  for (;;) {
    assertRunning(services);
    try {
      await attempt();
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() >= deadline)
      throw new Error(`cluster: ${what} did not succeed within ${timeoutMs} ms (last: ${last})`);
    await sleep(250);
  }
}

/** Fails at once, naming it, when a service that should run has died (instead of waiting out a timeout). */
function assertRunning(services: Map<ClusterService, ServiceProcess>): void {
  for (const service of services.values()) {
    if (service.crashed) throw new Error(`cluster: the ${service.name} service exited (${service.exitReason})`);
  }
}

/** One service's process: started, killed and started again on the same config; output to its log file. */
class ServiceProcess {
  private child: ChildProcess | undefined;
  private watchdog: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private logStream: ChildLog | undefined;
  private tail = '';
  /** Set when the process exits; `crashed` only when nobody asked it to. */
  exitReason: string | undefined = 'not started';
  private expectingExit = false;
  private retired = false;

  constructor(
    readonly name: ClusterService,
    private readonly binary: string,
    private readonly configFile: string,
    private readonly logFile: string,
  ) {}

  get pid(): number {
    return this.exitReason === undefined ? (this.child?.pid ?? -1) : -1;
  }

  get crashed(): boolean {
    return this.exitReason !== undefined && this.exitReason !== 'not started' && !this.expectingExit;
  }

  /** The cluster is being stopped: no launch from now on (a restart racing the teardown would leak a process). */
  retire(): void {
    this.retired = true;
  }

  async launch(): Promise<void> {
    if (this.retired) throw new Error(`cluster: the ${this.name} service is not started again: the cluster stopped`);
    if (this.exitReason === undefined) throw new Error(`cluster: the ${this.name} service is already running`);
    this.logStream ??= childLog(this.logFile);
    const child = spawn(
      this.binary,
      ['--config-file', this.configFile, '--allow-no-auth', 'start', '--service', this.name],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    this.exitReason = undefined;
    this.expectingExit = false;
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.exitReason = `could not spawn ${this.binary}: ${err.message}`;
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.exitReason = signal !== null ? `killed by ${signal}` : `exit code ${code}`;
        this.watchdog?.kill('SIGKILL');
        resolve();
      });
    });
    if (child.pid !== undefined) this.watchdog = spawnWatchdog(child.pid);
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        this.tail = (this.tail + chunk.toString()).slice(-LOG_TAIL_CHARS);
        this.logStream?.write(chunk);
      });
    }
  }

  async kill(signal: NodeJS.Signals): Promise<NodeJS.Signals | null> {
    if (this.exitReason !== undefined) throw new Error(`cluster: the ${this.name} service is not running`);
    this.expectingExit = true;
    this.child?.kill(signal);
    await this.exited;
    return this.child?.signalCode ?? null;
  }

  /**
   * SIGTERM, SIGKILL after a short grace: the cluster is thrown away, and matching otherwise drains its pollers for
   * the full shutdown period (10 s measured).
   */
  async stop(): Promise<void> {
    if (this.exitReason === undefined) {
      this.expectingExit = true;
      this.child?.kill('SIGTERM');
      const timer = setTimeout(() => this.child?.kill('SIGKILL'), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    const log = this.logStream;
    this.logStream = undefined;
    await log?.end();
  }

  describe(): string {
    const tail = this.tail.trim().split('\n').slice(-8).join('\n');
    return `--- ${this.name} (${this.exitReason ?? 'running'}) ---\n${tail || '(no output)'}`;
  }
}
