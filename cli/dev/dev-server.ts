import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Connection } from '@temporalio/client';
import { msToTs, optionalTsToMs } from '@temporalio/common/lib/time';
import { z } from 'zod';

import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import { resolveTemporalCli } from '../toolchain/resolve-temporal';
import { getFreePort, isPortFree } from './free-port';
import { childLog, type ChildLog } from './child-log';
import { spawnWatchdog, WATCHDOG_GRACE_MS } from './process-watchdog';

/** A running `temporal server start-dev` with SQLite persistence, owned by this process. */
export interface DevServer {
  /** gRPC frontend, `127.0.0.1:<port>`. */
  address: string;
  namespace: string;
  /** Web UI base URL; undefined when headless. */
  uiUrl?: string;
  /** Absolute path of the SQLite file that holds all state. */
  dbFile: string;
  /** Process id of the current server process (changes on restart). */
  pid: number;
  /** SIGTERM, wait for exit, SIGKILL after 10 s. Safe to call twice. */
  stop(): Promise<void>;
  /** Stop, then start again on the same SQLite file and ports, and wait until ready. */
  restart(): Promise<void>;
}

/** How to start the Temporal CLI's dev server; every field has a default (see each). */
export interface StartDevServerOptions {
  /** The SQLite file the server keeps its state in. Its folder is created. */
  dbFile?: string;
  /** gRPC port; default 7233; 0 picks a free port. */
  port?: number;
  /** Web UI port; default 8233; 0 picks a free port; null runs headless. */
  uiPort?: number | null;
  /** Namespace created at launch and given a retention of at least 7 days; default 'default'. */
  namespace?: string;
  /** Server stdout and stderr are appended here as well as kept in memory for error messages. */
  logFile?: string;
  /** How long to wait for the frontend to answer; default 30 s. */
  readyTimeoutMs?: number;
  /**
   * A codec server's base URL (`<url>/decode`, `<url>/encode`) for the Web UI (`--ui-codec-endpoint`), so it shows
   * encrypted payloads decoded (docs/payload-encryption.md). Ignored when headless.
   */
  uiCodecEndpoint?: string;
  /** More dynamic config, over DEV_SERVER_DYNAMIC_CONFIG. */
  dynamicConfig?: Record<string, number | string | boolean>;
  /** Where the Temporal CLI is installed when no other is found (see resolveTemporalCli). */
  toolsDir?: string;
  /** Where progress lines go (ready, retention raised); nothing is printed without it. */
  log?: (msg: string) => void;
}

/**
 * Deleting a closed workflow waits until the history's queues have acknowledged its close tasks, which they
 * persist every 30 s: a deletion then takes about 32 s, 4 s with these. For tests that delete workflows to play
 * the namespace's retention.
 */
export const FAST_DELETION_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'history.transferProcessorUpdateAckInterval': '1s',
  'history.visibilityProcessorUpdateAckInterval': '1s',
};

/** Closed workflows stay visible to operators for a week; the dev server's own default is one day. */
export const MIN_RETENTION_SECONDS = 7 * 24 * 60 * 60;
/** Where the dev server keeps its state between runs unless told otherwise: `.retrysafe/` of the folder it runs in. */
export const DEFAULT_DB_FILE = path.join('.retrysafe', 'temporal.sqlite');
/** Cold and warm starts measured 1.2-2 s on two loaded cores; 30 s leaves room for a slow CI machine. */
const READY_TIMEOUT_MS = 30_000;
/** The server flushes SQLite and closes listeners on SIGTERM well within this. */
const STOP_GRACE_MS = WATCHDOG_GRACE_MS;
const LOG_TAIL_CHARS = 8_000;
const HOST = '127.0.0.1';

const Port = z.number().int().min(0).max(65_535);
const OptionsSchema = z.object({
  dbFile: z.string().min(1).default(DEFAULT_DB_FILE),
  port: Port.default(7233),
  uiPort: Port.nullable().default(8233),
  namespace: z.string().min(1).default('default'),
  logFile: z.string().min(1).optional(),
  readyTimeoutMs: z.number().int().positive().default(READY_TIMEOUT_MS),
  uiCodecEndpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** More dynamic config, over DEV_SERVER_DYNAMIC_CONFIG (tests that need a setting of their own). */
  dynamicConfig: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
});

/**
 * Starts the Temporal CLI's dev server (resolved by scripts/toolchain) on loopback, with SQLite in WAL mode,
 * retrysafe's search attributes registered, and namespace retention of at least 7 days. Resolves once a real
 * gRPC call on the namespace succeeds.
 */
export async function startDevServer(opts: StartDevServerOptions = {}): Promise<DevServer> {
  const { log = () => undefined, toolsDir: _toolsDir, ...fields } = opts;
  const parsed = OptionsSchema.safeParse(fields);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`);
    throw new Error(`startDevServer: invalid options: ${problems.join('; ')}`);
  }
  const options = parsed.data;

  const cli = await resolveTemporalCli({ log, ...(opts.toolsDir ? { toolsDir: opts.toolsDir } : {}) });
  if (cli.path === undefined) {
    throw new Error(
      'startDevServer needs a Temporal CLI it can run itself (to restart it on the same database), but only the ' +
        "SDK's download is available. Set TEMPORAL_CLI to a Temporal CLI, or put `temporal` on PATH.",
    );
  }
  const dbFile = path.resolve(options.dbFile);
  await mkdir(path.dirname(dbFile), { recursive: true });
  const port = options.port === 0 ? await getFreePort(HOST) : options.port;
  const uiPort = options.uiPort === 0 ? await getFreePort(HOST) : options.uiPort;

  const server = new DevServerProcess({
    cliPath: cli.path,
    dbFile,
    port,
    uiPort,
    namespace: options.namespace,
    logFile: options.logFile,
    readyTimeoutMs: options.readyTimeoutMs,
    ...(options.uiCodecEndpoint !== undefined ? { uiCodecEndpoint: options.uiCodecEndpoint } : {}),
    ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
    log,
  });
  await server.launch();
  return {
    address: server.address,
    namespace: options.namespace,
    uiUrl: uiPort === null ? undefined : `http://${HOST}:${uiPort}`,
    dbFile,
    get pid() {
      return server.pid;
    },
    stop: () => server.stop(),
    restart: async () => {
      await server.stop();
      await server.launch();
    },
  };
}

/** Web UI page of a workflow (its latest run when `runId` is omitted); undefined when the server is headless. */
export function webUiWorkflowUrl(
  server: { uiUrl?: string; namespace: string },
  workflowId: string,
  runId?: string,
): string | undefined {
  if (server.uiUrl === undefined) return undefined;
  const namespace = encodeURIComponent(server.namespace);
  const base = `${server.uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}`;
  return runId === undefined ? base : `${base}/${encodeURIComponent(runId)}/history`;
}

/**
 * Dynamic config the embedded server starts with, the latency tuning of deploy/temporal-dynamic-config.yaml (whose
 * comments give the cost of each on a real cluster). retrysafe works without them, slower.
 * - history.transferProcessorMaxPollRPS: every hop from one workflow to another (a signal between workflows, a
 *   child start, the first task of a workflow started by update-with-start) is a transfer task, and each history
 *   shard reads its transfer queue at most this many times a second. At the server's default of 20 on the dev
 *   server's single shard, every hop waited for the next read, up to 50 ms: about 90 ms of an action's 450 ms in
 *   bench histories. Reads happen only when there are tasks, so an idle server does no more work for it.
 * - history.timerProcessorMaxTimeShift: how far the timer queue reads ahead (default 1 s); a timer created inside
 *   a read fires no earlier than its end. A retry's 200 ms backoff after a heartbeat timeout waited up to a
 *   second, and the heartbeat timeout itself fired up to a second late: a killed worker's provider call was
 *   retried 3.9 s after the kill instead of 2.2 s (the timeline bench's recovery leg).
 * Values are JSON on the command line: numbers as they are, durations as strings with their unit (a bare number
 * is read as seconds).
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | string>> = {
  'history.transferProcessorMaxPollRPS': 200,
  'history.timerProcessorMaxTimeShift': '100ms',
};

/** The CLI arguments for one launch; exported so the flag set can be checked without starting anything. */
export function devServerArgs(config: {
  dbFile: string;
  port: number;
  uiPort: number | null;
  namespace: string;
  uiCodecEndpoint?: string;
  dynamicConfig?: Readonly<Record<string, number | string | boolean>>;
}): string[] {
  return [
    'server',
    'start-dev',
    '--ip',
    HOST,
    '--port',
    String(config.port),
    ...(config.uiPort === null ? ['--headless'] : ['--ui-port', String(config.uiPort)]),
    ...(config.uiPort !== null && config.uiCodecEndpoint !== undefined
      ? ['--ui-codec-endpoint', config.uiCodecEndpoint]
      : []),
    '--db-filename',
    config.dbFile,
    // WAL lets the UI and visibility reads proceed during writes; NORMAL syncs at checkpoints, which WAL keeps
    // crash-safe for the database (a power cut may lose the last commits, a killed process does not).
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    '--namespace',
    config.namespace,
    ...SEARCH_ATTRIBUTE_REGISTRATIONS.flatMap(({ name, type }) => ['--search-attribute', `${name}=${type}`]),
    // Workflow update and update-with-start are on by default in CLI 1.9 (Server 1.32): no dynamic config needed.
    ...Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...config.dynamicConfig }).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
    '--log-level',
    'warn',
  ];
}

interface ProcessConfig {
  cliPath: string;
  dbFile: string;
  port: number;
  uiPort: number | null;
  namespace: string;
  logFile?: string;
  readyTimeoutMs: number;
  uiCodecEndpoint?: string;
  dynamicConfig?: Readonly<Record<string, number | string | boolean>>;
  log: (msg: string) => void;
}

class DevServerProcess {
  readonly address: string;
  private child: ChildProcess | undefined;
  private exited: Promise<string> = Promise.resolve('not started');
  private exitReason: string | undefined;
  private logTail = '';
  private logStream: ChildLog | undefined;
  private watchdog: ChildProcess | undefined;
  private readonly terminateOnExit = () => this.child?.kill('SIGTERM');

  constructor(private readonly config: ProcessConfig) {
    this.address = `${HOST}:${config.port}`;
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  async launch(): Promise<void> {
    const { config } = this;
    for (const [field, port] of [
      ['port', config.port],
      ['uiPort', config.uiPort],
    ] as const) {
      if (port !== null && !(await isPortFree(port, HOST))) {
        throw new Error(`startDevServer: ${field} ${port} on ${HOST} is already in use (another dev server?); pass 0`);
      }
    }
    if (config.logFile !== undefined) {
      await mkdir(path.dirname(path.resolve(config.logFile)), { recursive: true });
      this.logStream = childLog(config.logFile);
    }
    const started = Date.now();
    const child = spawn(config.cliPath, devServerArgs(config), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exitReason = undefined;
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.exitReason = `could not spawn ${config.cliPath}: ${err.message}`;
        process.removeListener('exit', this.terminateOnExit);
        void this.logStream?.end();
        resolve(this.exitReason);
      });
      child.once('exit', (code, signal) => {
        this.exitReason = signal !== null ? `killed by ${signal}` : `exit code ${code}`;
        process.removeListener('exit', this.terminateOnExit);
        this.watchdog?.kill('SIGKILL');
        resolve(this.exitReason);
      });
    });
    // A test runner or a demo that exits without stop() must not leave a server holding the port and DB: a
    // normal exit is caught here, a death by signal (a killed test file, a closed pipe) by the watchdog.
    process.once('exit', this.terminateOnExit);
    if (child.pid !== undefined) this.watchdog = spawnWatchdog(child.pid);
    // Once the pipes have delivered their last chunk, which may come after 'exit'.
    const log = this.logStream;
    child.once('close', () => void log?.end());
    for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => this.record(chunk));

    try {
      const connection = await this.waitUntilReady();
      try {
        await ensureRetention(connection, config.namespace, config.log);
      } finally {
        await connection.close();
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
    config.log(`dev server ready at ${this.address} (pid ${child.pid}) in ${Date.now() - started} ms`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || this.exitReason !== undefined) return;
    child.kill('SIGTERM');
    const grace = new AbortController();
    const exitedInTime = await Promise.race([
      this.exited.then(() => true),
      sleep(STOP_GRACE_MS, false, { signal: grace.signal }).catch(() => false),
    ]);
    grace.abort();
    if (!exitedInTime) {
      this.config.log(`dev server pid ${child.pid} ignored SIGTERM for ${STOP_GRACE_MS} ms; sending SIGKILL`);
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  private record(chunk: Buffer): void {
    this.logTail = (this.logTail + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    this.logStream?.write(chunk);
  }

  private failure(message: string): Error {
    const tail = this.logTail.trim() === '' ? '(no output)' : this.logTail.trimEnd();
    return new Error(`${message}\n--- last lines of the dev server log ---\n${tail}`);
  }

  // Polls namespace-scoped calls, not just the TCP port: the frontend listens before the namespace is usable, and
  // workers must not start before the search attributes they write are registered.
  private async waitUntilReady(): Promise<Connection> {
    const { namespace, readyTimeoutMs } = this.config;
    const deadline = Date.now() + readyTimeoutMs;
    let lastError = 'no attempt yet';
    while (Date.now() < deadline) {
      if (this.exitReason !== undefined) {
        throw this.failure(`temporal server start-dev stopped before it was ready (${this.exitReason})`);
      }
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address: this.address, connectTimeout: 1000 });
        const conn = connection;
        await conn.withDeadline(Date.now() + 2000, async () => {
          await conn.workflowService.describeNamespace({ namespace });
          await assertSearchAttributesRegistered(conn, namespace);
        });
        return conn;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        await connection?.close();
        await sleep(100);
      }
    }
    throw this.failure(`dev server at ${this.address} was not ready after ${readyTimeoutMs} ms (last: ${lastError})`);
  }
}

/** Throws, naming them, while any of retrysafe's search attributes is not registered on the namespace. */
export async function assertSearchAttributesRegistered(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_REGISTRATIONS.filter(({ name }) => customAttributes?.[name] === undefined);
  if (missing.length > 0) {
    throw new Error(`search attributes not registered yet: ${missing.map(({ name }) => name).join(', ')}`);
  }
}

async function ensureRetention(connection: Connection, namespace: string, log: (msg: string) => void): Promise<void> {
  const current = await retentionSeconds(connection, namespace);
  if (current >= MIN_RETENTION_SECONDS) return;
  await connection.workflowService.updateNamespace({
    namespace,
    config: { workflowExecutionRetentionTtl: msToTs(MIN_RETENTION_SECONDS * 1000) },
  });
  const updated = await retentionSeconds(connection, namespace);
  if (updated < MIN_RETENTION_SECONDS) {
    throw new Error(`namespace ${namespace}: retention is still ${updated} s after setting ${MIN_RETENTION_SECONDS} s`);
  }
  log(`namespace ${namespace}: retention raised from ${current / 3600} h to ${updated / 3600} h`);
}

async function retentionSeconds(connection: Connection, namespace: string): Promise<number> {
  const { config } = await connection.workflowService.describeNamespace({ namespace });
  return (optionalTsToMs(config?.workflowExecutionRetentionTtl) ?? 0) / 1000;
}
