import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Client } from 'pg';

import type { ResolvedPostgres } from '../toolchain/resolve-postgres';
import { spawnWatchdog } from '../../cli/dev/process-watchdog';
import { postgresEnv, resolvePostgres } from '../toolchain/resolve-postgres';

/**
 * A real, throw-away PostgreSQL server: a fresh cluster (`initdb -A trust -U postgres`) in a temporary folder,
 * listening on a free loopback port with its socket in that folder. The ledger's tests and `npm run cluster` use
 * it. `stop()` shuts it down and deletes the folder; a process that dies first kills it on exit. The server refuses
 * to run as root, so under root it runs as the `postgres` user (or `nobody`), which owns the folder.
 *
 * Durability: fsync is always off (nothing here survives the machine). Commits are asynchronous unless
 * `crashSafe` is set; then every commit reaches the operating system before it is acknowledged, so a killed
 * server (`restart({ immediate: true })`) loses nothing it acknowledged, which the cluster's chaos relies on.
 */

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  host: string;
  port: number;
  dataDir: string;
  binaries: ResolvedPostgres;
  /** Milliseconds from the call until the server answered a query (initdb included). */
  startupMs: number;
  /** Process id of the running postmaster (changes on restart). */
  readonly pid: number;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Stops the server and starts it again on the same folder and port; resolves once it answers a query.
   * `immediate` stops it with `pg_ctl stop -m immediate` (every backend quits at once, no checkpoint: crash
   * recovery on the next start), otherwise with a fast shutdown. `downMs` is how long it stays down in between.
   */
  restart(opts?: { immediate?: boolean; downMs?: number }): Promise<void>;
  /** `pg_ctl stop -m immediate`: the server dies at once, as in a crash; resolves once the postmaster is gone. */
  kill(): Promise<void>;
  /** Starts a killed server again on its folder and port (crash recovery), resolving once it answers a query. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  log?: (msg: string) => void;
  /** Give up waiting for the server after this long; default 30 s. */
  readyTimeoutMs?: number;
  /** Binaries to run instead of resolving them (scripts/toolchain/resolve-postgres.ts). */
  binaries?: ResolvedPostgres;
  /** Synchronous commits, so that a killed server keeps what it acknowledged; default false (faster). */
  crashSafe?: boolean;
  /** `max_connections`; default 40. */
  maxConnections?: number;
}

const HOST = '127.0.0.1';
const SUPERUSER = 'postgres';

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const started = Date.now();
  const binaries = options.binaries ?? (await resolvePostgres(options.log ? { log: options.log } : {}));
  const base = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-pg-'));
  const dataDir = path.join(base, 'data');
  const socketDir = path.join(base, 'socket');
  const runAs = await unprivilegedUser();
  const env = postgresEnv(binaries, { ...process.env, LC_ALL: 'C', LANG: 'C', TZ: 'UTC' });
  let server: ChildProcess | undefined;
  // An 'exit' listener that throws makes the process exit 1 after everything passed: this one never throws.
  const cleanupOnExit = () => {
    try {
      server?.kill('SIGKILL');
      rmSync(base, { recursive: true, force: true });
    } catch {
      // The watchdog deletes the folder once the server is gone.
    }
  };
  process.once('exit', cleanupOnExit);
  // A death by signal skips 'exit': a watchdog then deletes the folder (and stops the server once one runs).
  let guard = spawnWatchdog(0, 'SIGINT', { remove: [base] });
  try {
    await mkdir(socketDir);
    if (runAs) {
      await chown(base, runAs.uid, runAs.gid);
      await chown(socketDir, runAs.uid, runAs.gid);
    }
    await run(
      path.join(binaries.path, 'initdb'),
      ['-D', dataDir, '-A', 'trust', '-U', SUPERUSER, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { env, runAs },
    );
    const serverArgs = (port: number) => [
      '-D',
      dataDir,
      '-k',
      socketDir,
      '-h',
      HOST,
      '-p',
      String(port),
      ...['-c', 'fsync=off', '-c', 'full_page_writes=off'],
      ...['-c', `synchronous_commit=${options.crashSafe ? 'on' : 'off'}`],
      ...['-c', `max_connections=${options.maxConnections ?? 40}`, '-c', 'log_min_messages=warning'],
    ];
    const launch = async (port: number): Promise<{ child: ChildProcess; ready: string; log: () => string }> => {
      const child = spawn(path.join(binaries.path, 'postgres'), serverArgs(port), {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
        ...(runAs ?? {}),
      });
      server = child;
      if (child.pid !== undefined) {
        guard.kill('SIGKILL');
        guard = spawnWatchdog(child.pid, 'SIGINT', { remove: [base] });
      }
      let log = '';
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => (log = (log + chunk).slice(-8192)));
      const ready = await waitReady(child, port, options.readyTimeoutMs ?? 30_000);
      return { child, ready, log: () => log };
    };
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const { ready, log } = await launch(port);
      if (ready === 'ready') break;
      // Another process took the port between the probe and the bind: try another one.
      if (attempt < 3 && /could not bind|address already in use/i.test(log())) continue;
      throw new Error(`postgres did not start (${ready}): ${log().trim().split('\n').slice(-5).join('\n')}`);
    }
    const url = `postgres://${SUPERUSER}@${HOST}:${port}/postgres`;
    let stopped: Promise<void> | undefined;
    const kill = async (): Promise<void> => {
      if (stopped) throw new Error('postgres: kill after stop');
      const current = server!;
      if (current.exitCode !== null || current.signalCode !== null) throw new Error('postgres is not running');
      const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      await run(path.join(binaries.path, 'pg_ctl'), ['-D', dataDir, 'stop', '-m', 'immediate', '-w'], {
        env,
        runAs,
      });
      await exited;
    };
    const start = async (): Promise<void> => {
      if (stopped) throw new Error('postgres: start after stop');
      const current = server!;
      if (current.exitCode === null && current.signalCode === null) throw new Error('postgres is already running');
      const { ready, log } = await launch(port);
      if (ready !== 'ready') {
        throw new Error(`postgres did not come back (${ready}): ${log().trim().split('\n').slice(-5).join('\n')}`);
      }
    };
    return {
      url,
      host: HOST,
      port,
      dataDir,
      binaries,
      startupMs: Date.now() - started,
      get pid() {
        return server?.pid ?? -1;
      },
      async createDatabase(name: string): Promise<string> {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
        const client = new Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${name}`);
        } finally {
          await client.end();
        }
        return `postgres://${SUPERUSER}@${HOST}:${port}/${name}`;
      },
      async restart(opts = {}) {
        if (stopped) throw new Error('postgres: restart after stop');
        if (opts.immediate) await kill();
        else await stopProcess(server!);
        if (opts.downMs) await new Promise((resolve) => setTimeout(resolve, opts.downMs));
        await start();
      },
      kill,
      start,
      stop() {
        stopped ??= (async () => {
          if (server) await stopProcess(server);
          process.removeListener('exit', cleanupOnExit);
          await rm(base, { recursive: true, force: true });
          guard.kill('SIGKILL');
        })();
        return stopped;
      },
    };
  } catch (err) {
    if (server) await stopProcess(server);
    process.removeListener('exit', cleanupOnExit);
    await rm(base, { recursive: true, force: true });
    guard.kill('SIGKILL');
    throw err;
  }
}

/** Under root: the uid/gid of `postgres` (Debian's package makes it) or `nobody`; otherwise undefined. */
async function unprivilegedUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = await readFile('/etc/passwd', 'utf8');
  for (const name of ['postgres', 'nobody']) {
    const line = passwd.split('\n').find((l) => l.startsWith(`${name}:`));
    if (line) {
      const [, , uid, gid] = line.split(':');
      return { uid: Number(uid), gid: Number(gid) };
    }
  }
  throw new Error('running as root, and there is neither a postgres nor a nobody user to run the server as');
}

function run(
  command: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; runAs: { uid: number; gid: number } | undefined },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], ...(opts.runAs ?? {}) });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (output = (output + chunk).slice(-8192)));
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      reject(new Error(`${path.basename(command)} failed (${signal ?? `exit ${code}`}): ${output.trim()}`));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** 'ready' once a query succeeds; otherwise why not ('exited …' or 'timed out'). */
async function waitReady(server: ChildProcess, port: number, timeoutMs: number): Promise<string> {
  let exited: string | undefined;
  server.once('exit', (code, signal) => (exited = `exited ${signal ?? code}`));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) return exited;
    const client = new Client({
      host: HOST,
      port,
      user: SUPERUSER,
      database: 'postgres',
      connectionTimeoutMillis: 1000,
    });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return 'ready';
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return exited ?? `timed out after ${timeoutMs} ms`;
}

/** Fast shutdown (SIGINT: abort sessions, checkpoint, exit), SIGKILL after 10 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
