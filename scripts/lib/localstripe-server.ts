import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { localstripeEnv, resolveLocalstripe, type ResolvedLocalstripe } from '../toolchain/resolve-localstripe';
import { getFreePort } from '../../cli/dev/free-port';
import { spawnWatchdog, stopThrowawayServer } from '../../cli/dev/process-watchdog';

/**
 * A throw-away localstripe: Stripe's API faked on a free loopback port, its store pickled into a temporary folder
 * (through scripts/lib/localstripe-launcher.py; localstripe's own command binds every interface and shares one
 * store file in /tmp). Any `sk_…` key is accepted; `apiKey` is a fresh one.
 */
export interface LocalstripeServer {
  /** The API's base URL, `http://127.0.0.1:<port>` (resources under /v1/). */
  url: string;
  apiKey: string;
  pid: number;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 20_000;
const LAUNCHER = path.join(__dirname, 'localstripe-launcher.py');

export async function startLocalstripe(
  opts: { localstripe?: ResolvedLocalstripe; log?: (msg: string) => void } = {},
): Promise<LocalstripeServer> {
  const resolved = opts.localstripe ?? (await resolveLocalstripe(opts.log ? { log: opts.log } : {}));
  const port = await getFreePort(HOST);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-localstripe-'));
  let child: ChildProcess;
  try {
    // -s (no user site-packages) only for our own install: an interpreter from RETRYSAFE_LOCALSTRIPE may rely on it.
    child = spawn(
      resolved.python,
      [...(resolved.sitePackages ? ['-s'] : []), LAUNCHER, HOST, String(port), path.join(dir, 'store.pickle')],
      { env: { ...localstripeEnv(resolved), PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const watchdog = child.pid !== undefined ? spawnWatchdog(child.pid, 'SIGTERM', { remove: [dir] }) : undefined;
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  }
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://${HOST}:${port}`;
  const apiKey = `sk_test_retrysafe${randomBytes(12).toString('hex')}`;
  const stop = () => stopThrowawayServer(child, exited, { dir, ...(watchdog ? { watchdog } : {}) });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastAnswer = 'no answer';
  for (;;) {
    if (spawnError || child.exitCode !== null || child.signalCode !== null) {
      await stop();
      const why = spawnError ? `could not run ${resolved.python}: ${spawnError.message}` : 'exited before it was ready';
      throw new Error(`localstripe ${why}${output.trim() ? `:\n${output.trim()}` : ''}`);
    }
    try {
      // An authenticated read: the app is up and takes our key. It creates nothing.
      const res = await fetch(`${url}/v1/customers?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } });
      if (res.ok) break;
      lastAnswer = `HTTP ${res.status}`;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `localstripe did not answer ${url}/v1/customers within ${READY_TIMEOUT_MS} ms (${lastAnswer}):\n${output.trim()}`,
      );
    }
    await sleep(100);
  }
  return { url, apiKey, pid: child.pid ?? -1, stop };
}
