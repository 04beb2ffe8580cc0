import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Payload, PayloadCodec } from '@temporalio/common';

/**
 * Temporal's remote codec protocol over HTTP, for the Web UI's "remote codec endpoint" and the CLI's
 * `--codec-endpoint`: `POST <base>/decode` and `POST <base>/encode`, each taking and answering
 * `{ "payloads": [ { "metadata": { "<key>": "<base64>" }, "data": "<base64>" } ] }` (proto3 JSON: every bytes
 * field is base64). The caller mounts these routes at `<base>` (`app.route('/codec', …)`); authentication policy
 * is its own (session cookie, bearer token), handed in as `authorize`.
 *
 * - An unauthenticated request gets 401 and its body is not read, let alone decoded.
 * - CORS for the Web UI: only `allowedOrigins` (exact `scheme://host:port`) get `Access-Control-Allow-Origin`
 *   (their own origin, never `*`) with credentials allowed, so the UI may send its cookie; a preflight from any other
 *   origin gets 403, and so does a request that carries another origin.
 * - Bodies over `maxBodyBytes` get 413 (Hono's body limit); malformed JSON or fields 400 naming the field; a payload
 *   the codec refuses (an unknown key ID, a tampered ciphertext) 422 with the codec's message. Every answer has
 *   `Cache-Control: no-store`.
 */
export interface CodecHandlerOptions {
  codec: PayloadCodec;
  /** Who is asking, or undefined when the request is not authenticated. */
  authorize(c: Context): Promise<{ operator: string } | undefined>;
  /** Web UI origins allowed to call from a browser, e.g. `http://127.0.0.1:8233`. */
  allowedOrigins: string[];
  /** Default 4 MiB: a history page's payloads, with room to spare. */
  maxBodyBytes?: number;
  /** Called once per served request, for an audit log (operator, operation, namespace, payload count). */
  onServed?(event: { operator: string; operation: 'encode' | 'decode'; namespace?: string; payloads: number }): void;
}

export const DEFAULT_CODEC_MAX_BODY_BYTES = 4 * 1024 * 1024;
const ALLOWED_HEADERS = 'content-type, x-namespace, authorization';
const BASE64 = /^(?:[A-Za-z0-9+/\-_]{4})*(?:[A-Za-z0-9+/\-_]{2}(?:==)?|[A-Za-z0-9+/\-_]{3}=?)?$/;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type CodecEnv = { Variables: { operator: string } };

const send = (c: Context, status: number, body: unknown) => c.json(body, status as 200);

export function createCodecRoutes(options: CodecHandlerOptions): Hono<CodecEnv> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_CODEC_MAX_BODY_BYTES;
  const routes = new Hono<CodecEnv>();
  routes.use('*', webUiCors(options.allowedOrigins));
  for (const operation of ['encode', 'decode'] as const) {
    routes.post(
      `/${operation}`,
      authorized(options),
      async (c, next) => {
        const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
        // application/json only: a cross-site form or text/plain post cannot reach the codec without a preflight.
        if (type !== 'application/json') return send(c, 415, { error: 'content-type must be application/json' });
        await next();
      },
      bodyLimit({
        maxSize: maxBodyBytes,
        onError: (c) => send(c, 413, { error: `body is over ${maxBodyBytes} bytes` }),
      }),
      async (c) => {
        try {
          const payloads = parseBody(await c.req.text());
          const out = await run(options.codec, operation, payloads);
          const namespace = c.req.header('x-namespace');
          options.onServed?.({
            operator: c.var.operator,
            operation,
            ...(namespace !== undefined ? { namespace } : {}),
            payloads: payloads.length,
          });
          return send(c, 200, { payloads: out.map(toJson) });
        } catch (err) {
          if (err instanceof HttpError) return send(c, err.status, { error: err.message });
          return send(c, 500, { error: 'codec server error' });
        }
      },
    );
    routes.all(`/${operation}`, (c) => {
      c.header('Allow', 'POST, OPTIONS');
      return send(c, 405, { error: 'method not allowed: use POST' });
    });
  }
  routes.all('*', (c) => send(c, 404, { error: 'not found: use /encode or /decode' }));
  return routes;
}

/** Only the listed Web UI origins, each its own (never `*`), with credentials; another origin gets 403. */
function webUiCors(allowedOrigins: readonly string[]): MiddlewareHandler {
  const allowed = new Set(allowedOrigins.map((o) => o.replace(/\/+$/, '')));
  return async (c, next) => {
    c.header('Cache-Control', 'no-store');
    c.header('Vary', 'Origin');
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      if (!allowed.has(origin)) return send(c, 403, { error: 'origin not allowed' });
      c.header('Access-Control-Allow-Origin', origin);
      c.header('Access-Control-Allow-Credentials', 'true');
    }
    if (c.req.method === 'OPTIONS') {
      c.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
      c.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      c.header('Access-Control-Max-Age', '600');
      return c.body(null, 204);
    }
    await next();
  };
}

/** 401 before the body is read when `authorize` knows no one; the operator is then `c.var.operator`. */
function authorized(options: CodecHandlerOptions): MiddlewareHandler<CodecEnv> {
  return async (c, next) => {
    let who: { operator: string } | undefined;
    try {
      who = await options.authorize(c);
    } catch {
      return send(c, 500, { error: 'authorization failed' });
    }
    if (who === undefined) {
      c.header('WWW-Authenticate', 'Bearer');
      return send(c, 401, { error: 'authentication required' });
    }
    c.set('operator', who.operator);
    await next();
  };
}

async function run(codec: PayloadCodec, operation: 'encode' | 'decode', payloads: Payload[]): Promise<Payload[]> {
  try {
    return await (operation === 'encode' ? codec.encode(payloads) : codec.decode(payloads));
  } catch (err) {
    throw new HttpError(422, `cannot ${operation}: ${(err as Error).message}`);
  }
}

function bytesField(value: unknown, field: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new HttpError(400, `${field}: must be a base64 string`);
  return Buffer.from(value, 'base64');
}

function parseBody(body: string): Payload[] {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    throw new HttpError(400, 'body: must be JSON { "payloads": [...] }');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new HttpError(400, 'body: must be a JSON object { "payloads": [...] }');
  }
  const list = (raw as { payloads?: unknown }).payloads;
  if (!Array.isArray(list)) throw new HttpError(400, 'payloads: must be an array');
  return list.map((item: unknown, i): Payload => {
    const at = `payloads[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new HttpError(400, `${at}: must be an object { "metadata": {...}, "data": "<base64>" }`);
    }
    const { metadata, data } = item as { metadata?: unknown; data?: unknown };
    const payload: Payload = {};
    if (metadata !== undefined && metadata !== null) {
      if (typeof metadata !== 'object' || Array.isArray(metadata)) {
        throw new HttpError(400, `${at}.metadata: must be an object of base64 strings`);
      }
      payload.metadata = Object.fromEntries(
        Object.entries(metadata as Record<string, unknown>).map(([k, v]) => [
          k,
          bytesField(v, `${at}.metadata.${JSON.stringify(k).slice(1, -1).slice(0, 60)}`),
        ]),
      );
    }
    if (data !== undefined && data !== null) payload.data = bytesField(data, `${at}.data`);
    return payload;
  });
}

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}
