import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { resolveMailpit } from '../toolchain/resolve-mailpit';
import { getFreePorts } from '../../cli/dev/free-port';
import { spawnWatchdog, stopThrowawayServer } from '../../cli/dev/process-watchdog';
import { waitForHttpReady } from './http-ready';

/** A throw-away Mailpit: SMTP and its HTTP API on free loopback ports, its database in a temporary folder. */
export interface MailpitServer {
  smtp: { host: string; port: number };
  /** The HTTP API's base URL, `http://127.0.0.1:<port>` (messages under /api/v1/). */
  apiUrl: string;
  pid: number;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 20_000;

export interface StartMailpitOptions {
  binary?: string;
  log?: (msg: string) => void;
  /** Mailpit's `--smtp-allowed-recipients`: recipients not matching this regular expression are refused at RCPT. */
  smtpAllowedRecipients?: string;
}

export async function startMailpit(opts: StartMailpitOptions = {}): Promise<MailpitServer> {
  const binary = opts.binary ?? (await resolveMailpit(opts.log ? { log: opts.log } : {})).path;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-mailpit-'));
  const [smtpPort, httpPort] = await getFreePorts(2, HOST);
  const child: ChildProcess = spawn(
    binary,
    [
      ...['--smtp', `${HOST}:${smtpPort}`, '--listen', `${HOST}:${httpPort}`],
      ...['--database', path.join(dir, 'mailpit.db'), '--disable-version-check', '--smtp-disable-rdns'],
      ...(opts.smtpAllowedRecipients ? ['--smtp-allowed-recipients', opts.smtpAllowedRecipients] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const watchdog = child.pid !== undefined ? spawnWatchdog(child.pid, 'SIGTERM', { remove: [dir] }) : undefined;
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const apiUrl = `http://${HOST}:${httpPort}`;
  const stop = () => stopThrowawayServer(child, exited, { dir, ...(watchdog ? { watchdog } : {}) });
  await waitForHttpReady({
    name: 'mailpit',
    child,
    url: `${apiUrl}/readyz`,
    output: () => output,
    stop,
    timeoutMs: READY_TIMEOUT_MS,
  });
  return { smtp: { host: HOST, port: smtpPort }, apiUrl, pid: child.pid ?? -1, stop };
}
