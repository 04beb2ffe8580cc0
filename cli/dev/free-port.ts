import net from 'node:net';

const LOOPBACK = '127.0.0.1';

/**
 * Ports are drawn from below every common OS's ephemeral range (Linux 32768+, macOS and Windows 49152+). A port the
 * OS hands out for port 0 comes from that range, and so does the source port of every outgoing connection: the dev
 * server dials its own services dozens of times while starting, and one of those dials can take the port we chose
 * for its Web UI before the UI binds it ("bind: address already in use", seen on restarts).
 */
const FIRST_CANDIDATE = 20_000;
const LAST_CANDIDATE = 32_767;
const MAX_TRIES = 200;

/**
 * `count` distinct free TCP ports on `host`. Every port is held open until all are found, so one call never
 * returns the same port twice; another process may still take one before the caller binds it, which callers
 * tolerate by failing loudly.
 */
export async function getFreePorts(count: number, host = LOOPBACK): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let tries = 0; ports.length < count && tries < MAX_TRIES; tries++) {
      const candidate = FIRST_CANDIDATE + Math.floor(Math.random() * (LAST_CANDIDATE - FIRST_CANDIDATE + 1));
      if (ports.includes(candidate)) continue;
      const server = net.createServer();
      try {
        await listen(server, candidate, host);
      } catch {
        continue;
      }
      servers.push(server);
      ports.push(candidate);
    }
    // A crowded range is unlikely; the OS's own choice is still better than failing.
    while (ports.length < count) {
      const server = net.createServer();
      servers.push(server);
      ports.push(await listen(server, 0, host));
    }
    return ports;
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** One free TCP port on `host`. */
export async function getFreePort(host = LOOPBACK): Promise<number> {
  const [port] = await getFreePorts(1, host);
  return port;
}

/** Whether nothing listens on `port` at `host` right now (we can bind it ourselves). */
export async function isPortFree(port: number, host = LOOPBACK): Promise<boolean> {
  const server = net.createServer();
  try {
    await listen(server, port, host);
    return true;
  } catch {
    return false;
  } finally {
    await close(server);
  }
}

function listen(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('listening socket has no port'));
      resolve(address.port);
    });
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
