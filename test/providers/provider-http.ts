import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiErrorBody, WebhookEvent } from '../../examples/sandbox-providers/types';

export interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
}

/** POST JSON the way an agent's activity would; transport failures (reset, dropped reply) reject. */
export async function post(
  baseUrl: string,
  path: string,
  body: unknown,
  opts: { key?: string; signal?: AbortSignal } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.key !== undefined) headers['idempotency-key'] = opts.key;
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: opts.signal,
  });
  return { status: res.status, headers: res.headers, body: parseJson(await res.text()) };
}

export async function get(baseUrl: string, path: string): Promise<HttpResult> {
  const res = await fetch(`${baseUrl}${path}`);
  return { status: res.status, headers: res.headers, body: parseJson(await res.text()) };
}

function parseJson(text: string): unknown {
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

export function errorOf(result: HttpResult): ApiErrorBody['error'] {
  return ApiErrorBody.parse(result.body).error;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until check returns a value; for observing lagged reads and async webhooks without fixed waits. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export interface WebhookReceiver {
  url: string;
  events: WebhookEvent[];
  close(): Promise<void>;
}

/** A local endpoint recording the events it accepts; it answers 500 to the first `failFirst` deliveries. */
export async function startWebhookReceiver(failFirst = 0): Promise<WebhookReceiver> {
  const events: WebhookEvent[] = [];
  let failuresLeft = failFirst;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        res.writeHead(500).end();
        return;
      }
      events.push(WebhookEvent.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    events,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
