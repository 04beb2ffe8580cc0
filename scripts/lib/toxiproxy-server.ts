import { spawn, type ChildProcess } from 'node:child_process';

import { resolveToxiproxy } from '../toolchain/resolve-toxiproxy';
import { getFreePorts } from '../../cli/dev/free-port';
import { spawnWatchdog, stopThrowawayServer } from '../../cli/dev/process-watchdog';
import { waitForHttpReady } from './http-ready';

/**
 * A throw-away toxiproxy on loopback: its HTTP API on a free port, each proxy listening on a port of its own that the
 * system picks. The faults are toxiproxy's toxics, added and removed through its API while connections run:
 *
 *   reset after commit   `reset_peer` downstream, timeout 0: the request reaches the server, which acts; its reply's
 *                        first bytes reset the connection (RST), so the client learns nothing
 *   reply withheld       `timeout` downstream: the reply is held back, then the connection closes (or never, at 0)
 *   latency, bandwidth   `latency` / `bandwidth` on either stream
 *   cut                  the proxy disabled: connections are dropped and new ones refused until it is enabled again
 */
export interface ToxiproxyServer {
  apiUrl: string;
  pid: number;
  /** A proxy named `name` in front of `upstream` (`host:port`), listening on a free loopback port. */
  proxy(name: string, upstream: string): Promise<ToxicProxy>;
  stop(): Promise<void>;
}

export type ToxicStream = 'upstream' | 'downstream';

export interface Toxic {
  name: string;
  type: 'reset_peer' | 'timeout' | 'latency' | 'bandwidth' | 'slow_close' | 'limit_data' | 'slicer';
  stream: ToxicStream;
  /** The share of connections it applies to; 1 by default. */
  toxicity?: number;
  attributes: Record<string, number>;
}

export interface ToxicProxy {
  name: string;
  /** Where clients connect instead of the upstream. */
  host: string;
  port: number;
  addToxic(toxic: Toxic): Promise<void>;
  removeToxic(name: string): Promise<void>;
  /** A full cut: every connection dropped, new ones refused, until `heal`. */
  cut(): Promise<void>;
  heal(): Promise<void>;
}

/** The reply of whatever the proxy fronts is lost after the server acted on the request. */
export const RESET_AFTER_COMMIT: Toxic = {
  name: 'reset-after-commit',
  type: 'reset_peer',
  stream: 'downstream',
  attributes: { timeout: 0 },
};

/** The reply is withheld for `ms`, then the connection closes without it. */
export function replyWithheld(ms: number): Toxic {
  return { name: 'reply-withheld', type: 'timeout', stream: 'downstream', attributes: { timeout: ms } };
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 20_000;

export async function startToxiproxy(
  opts: { binary?: string; log?: (msg: string) => void } = {},
): Promise<ToxiproxyServer> {
  const binary = opts.binary ?? (await resolveToxiproxy(opts.log ? { log: opts.log } : {})).path;
  const [apiPort] = await getFreePorts(1, HOST);
  const child: ChildProcess = spawn(binary, ['-host', HOST, '-port', String(apiPort)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watchdog = child.pid !== undefined ? spawnWatchdog(child.pid, 'SIGTERM', {}) : undefined;
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const apiUrl = `http://${HOST}:${apiPort}`;
  const stop = () => stopThrowawayServer(child, exited, watchdog ? { watchdog } : {});
  await waitForHttpReady({
    name: 'toxiproxy',
    child,
    url: `${apiUrl}/version`,
    output: () => output,
    stop,
    timeoutMs: READY_TIMEOUT_MS,
    intervalMs: 50,
  });

  async function api(method: string, route: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${apiUrl}${route}`, {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`toxiproxy ${method} ${route}: ${res.status} ${text.trim()}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  async function proxy(name: string, upstream: string): Promise<ToxicProxy> {
    const made = (await api('POST', '/proxies', { name, listen: `${HOST}:0`, upstream, enabled: true })) as {
      listen: string;
    };
    const port = Number(made.listen.slice(made.listen.lastIndexOf(':') + 1));
    const route = `/proxies/${encodeURIComponent(name)}`;
    return {
      name,
      host: HOST,
      port,
      addToxic: async (toxic) => {
        await api('POST', `${route}/toxics`, { toxicity: 1, ...toxic });
      },
      removeToxic: async (toxicName) => {
        await api('DELETE', `${route}/toxics/${encodeURIComponent(toxicName)}`);
      },
      // Re-enabling listens again on the same address, so clients keep the port they were given.
      cut: async () => {
        await api('POST', route, { enabled: false });
      },
      heal: async () => {
        await api('POST', route, { enabled: true });
      },
    };
  }

  return { apiUrl, pid: child.pid ?? -1, proxy, stop };
}
