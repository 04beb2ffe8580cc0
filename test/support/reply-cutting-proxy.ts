import net from 'node:net';

/**
 * A TCP relay in front of a server that forwards everything both ways until what the client has sent satisfies
 * `cutAfter` (the end of an SMTP DATA, an HTTP request line), then hangs up instead of passing on the server's next
 * answer: the server has acted, the client has no reply. Only the first such answer is cut; later ones pass.
 */
export interface ReplyCuttingProxy {
  port: number;
  /** How many answers were cut (0 or 1). */
  cut(): number;
  close(): void;
}

/** How much of what the client sent is kept between chunks, so a marker split across two chunks is still seen. */
const TAIL_CHARS = 64;

export async function startReplyCuttingProxy(
  target: { host: string; port: number },
  cutAfter: (sentSoFar: string) => boolean,
): Promise<ReplyCuttingProxy> {
  let cuts = 0;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    let armed = false;
    let tail = '';
    client.on('data', (chunk) => {
      const seen = tail + chunk.toString('latin1');
      if (cuts === 0 && cutAfter(seen)) armed = true;
      tail = seen.slice(-TAIL_CHARS);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (armed && cuts === 0) {
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { port: (proxy.address() as net.AddressInfo).port, cut: () => cuts, close: () => proxy.close() };
}
