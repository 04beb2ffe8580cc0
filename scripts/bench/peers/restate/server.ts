import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { childLog } from '../../../../cli/dev/child-log';
import { getFreePorts } from '../../../../cli/dev/free-port';
import { spawnWatchdog, stopThrowawayServer } from '../../../../cli/dev/process-watchdog';

/** A throw-away restate-server: one node on loopback, its data, config and log in one folder. */
export interface RestateServer {
  ingressUrl: string;
  adminUrl: string;
  /** The server's own answer to GET /version, e.g. `1.7.12`. */
  version: string;
  pid: number;
  /** SIGTERM, SIGKILL after a grace period, then deletes the folder. */
  stop(): Promise<void>;
}

export interface StartRestateServerOptions {
  /** Created if missing; deleted by stop(). */
  dir: string;
  log(line: string): void;
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;
const LOG_TAIL_CHARS = 4_000;

/**
 * The native binary, not `node_modules/.bin/restate-server`: that is a node wrapper that spawns the binary, so
 * the pid we signal (and the watchdog watches) would not be the server's.
 */
function restateServerBinary(): string {
  return require.resolve(`@restatedev/restate-server-${os.platform()}-${os.arch()}/bin/restate-server`);
}

/**
 * TCP only (no Unix sockets in the folder), every listener on its own loopback port. Two partitions instead of
 * 24 and a smaller RocksDB budget: one bench client on a small machine needs neither, and they make startup
 * slower. The shutdown timeout stays under stopThrowawayServer's grace, so SIGTERM normally suffices.
 */
function configToml(ports: { ingress: number; admin: number; fabric: number }): string {
  return [
    'listen-mode = "tcp"',
    'node-name = "bench"',
    `bind-address = "${HOST}:${ports.fabric}"`,
    `advertised-address = "http://${HOST}:${ports.fabric}/"`,
    'default-num-partitions = 2',
    'disable-telemetry = true',
    'shutdown-timeout = "3s"',
    'rocksdb-total-memory-size = "256 MiB"',
    'log-format = "compact"',
    'log-disable-ansi-codes = true',
    '',
    '[admin]',
    `bind-address = "${HOST}:${ports.admin}"`,
    'disable-web-ui = true',
    '',
    '[ingress]',
    `bind-address = "${HOST}:${ports.ingress}"`,
    '',
  ].join('\n');
}

export async function startRestateServer(opts: StartRestateServerOptions): Promise<RestateServer> {
  await mkdir(opts.dir, { recursive: true });
  const [ingress, admin, fabric] = await getFreePorts(3, HOST);
  const configFile = path.join(opts.dir, 'restate.toml');
  await writeFile(configFile, configToml({ ingress, admin, fabric }));
  const child = spawn(
    restateServerBinary(),
    ['--config-file', configFile, '--base-dir', path.join(opts.dir, 'data'), '--no-logo'],
    // The environment is ours, minus any RESTATE_* a developer exported: it would override the file.
    { cwd: opts.dir, env: withoutRestateVariables(process.env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const watchdog = child.pid !== undefined ? spawnWatchdog(child.pid, 'SIGTERM', { remove: [opts.dir] }) : undefined;
  const logFile = childLog(path.join(opts.dir, 'restate-server.log'));
  let tail = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-LOG_TAIL_CHARS);
      logFile.write(chunk);
    });
  }
  child.once('close', () => void logFile.end());
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const stop = () => stopThrowawayServer(child, exited, { dir: opts.dir, ...(watchdog ? { watchdog } : {}) });

  const ingressUrl = `http://${HOST}:${ingress}`;
  const adminUrl = `http://${HOST}:${admin}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`restate-server exited before it was ready:\n${tail.trim()}`);
    }
    if ((await answers(`${adminUrl}/health`)) && (await answers(`${ingressUrl}/restate/health`))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`restate-server did not answer within ${READY_TIMEOUT_MS} ms:\n${tail.trim()}`);
    }
    await sleep(100);
  }
  let version: string;
  try {
    version = ((await (await fetch(`${adminUrl}/version`)).json()) as { version: string }).version;
  } catch (err) {
    await stop();
    throw err;
  }
  opts.log(`restate-server ${version} ready: ingress ${ingressUrl}, admin ${adminUrl}, pid ${child.pid}`);
  return { ingressUrl, adminUrl, version, pid: child.pid ?? -1, stop };
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false; // not listening yet
  }
}

function withoutRestateVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('RESTATE_')));
}
