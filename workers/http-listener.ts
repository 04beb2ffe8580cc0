import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';

/** What a listening HTTP surface tells its starter: where it is and how to stop it. */
export interface HttpListener {
  /** `http://host:port`, with an IPv6 host in brackets. */
  origin: string;
  /** The host as a URL writes it (IPv6 in brackets) and the port bound (the one chosen, when 0 was asked). */
  host: string;
  port: number;
  /** Stops accepting requests, drops open connections and closes the listening socket. */
  close(): Promise<void>;
}

/**
 * Serves a Hono app (or anything with a Fetch API `fetch`) on Node's HTTP server through Hono's Node adapter,
 * and resolves once it listens, or rejects with the listen error (a port in use, a host not on this machine).
 */
export async function listenHttp(
  app: { fetch: (request: Request, env: never) => Response | Promise<Response> },
  where: { port: number; host: string },
): Promise<HttpListener> {
  // These servers run inside a team's processes (a worker, `retrysafe dev`): leave their global Request and
  // Response alone rather than swap in the adapter's faster ones.
  const server = createAdaptorServer({ fetch: app.fetch as never, overrideGlobalObjects: false }) as http.Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    origin: `http://${host}:${port}`,
    host,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
