import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';

/**
 * Temporal's remote codec protocol over HTTP, for the Web UI's "remote codec endpoint" and the CLI's
 * `--codec-endpoint`: `POST <base>/decode` and `POST <base>/encode`, each taking and answering
 * `{ "payloads": [ { "metadata": { "<key>": "<base64>" }, "data": "<base64>" } ] }` (proto3 JSON: every bytes
 * field is base64). The caller routes `<base>/…` here with the subpath; mounting and authentication policy are
 * its own (session cookie, bearer token), handed in as `authorize`.
 *
 * - An unauthenticated request gets 401 and its body is not read, let alone decoded.
 * - CORS for the Web UI: only `allowedOrigins` (exact `scheme://host:port`) get `Access-Control-Allow-Origin`
 *   (their own origin, never `*`) with credentials allowed, so the UI may send its cookie; a preflight from any other
 *   origin gets 403, and so does a request that carries another origin.
 * - Bodies over `maxBodyBytes` get 413; malformed JSON or fields 400 naming the field; a payload the codec refuses
 *   (an unknown key ID, a tampered ciphertext) 422 with the codec's message. Every answer has `Cache-Control: no-store`.
 */
export interface CodecHandlerOptions {
  codec: PayloadCodec;
  /** Who is asking, or undefined when the request is not authenticated. */
  authorize(req: IncomingMessage): Promise<{ operator: string } | undefined>;
  /** Web UI origins allowed to call from a browser, e.g. `http://127.0.0.1:8233`. */
  allowedOrigins: string[];
  /** Default 4 MiB: a history page's payloads, with room to spare. */
  maxBodyBytes?: number;
  /** Called once per served request, for an audit log (operator, operation, namespace, payload count). */
  onServed?(event: { operator: string; operation: 'encode' | 'decode'; namespace?: string; payloads: number }): void;
}

export type CodecHandler = (req: IncomingMessage, res: ServerResponse, subpath: string) => Promise<void>;

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

export function createCodecHandler(options: CodecHandlerOptions): CodecHandler {
  const allowed = new Set(options.allowedOrigins.map((o) => o.replace(/\/+$/, '')));
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_CODEC_MAX_BODY_BYTES;

  return async (req, res, subpath) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!allowed.has(origin)) return send(res, 403, { error: 'origin not allowed' });
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      res.writeHead(204).end();
      return;
    }
    const operation = subpath === '/encode' ? 'encode' : subpath === '/decode' ? 'decode' : undefined;
    if (operation === undefined) return send(res, 404, { error: 'not found: use /encode or /decode' });
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST, OPTIONS');
      return send(res, 405, { error: 'method not allowed: use POST' });
    }
    let who: { operator: string } | undefined;
    try {
      who = await options.authorize(req);
    } catch {
      return send(res, 500, { error: 'authorization failed' });
    }
    if (who === undefined) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return send(res, 401, { error: 'authentication required' });
    }
    try {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      // application/json only: a cross-site form or text/plain post cannot reach the codec without a preflight.
      if (type !== 'application/json') throw new HttpError(415, 'content-type must be application/json');
      const payloads = parseBody(await readBody(req, maxBodyBytes));
      let out: Payload[];
      try {
        out = await (operation === 'encode' ? options.codec.encode(payloads) : options.codec.decode(payloads));
      } catch (err) {
        throw new HttpError(422, `cannot ${operation}: ${(err as Error).message}`);
      }
      const namespace = req.headers['x-namespace'];
      options.onServed?.({
        operator: who.operator,
        operation,
        ...(typeof namespace === 'string' ? { namespace } : {}),
        payloads: payloads.length,
      });
      return send(res, 200, { payloads: out.map(toJson) });
    } catch (err) {
      if (err instanceof HttpError) return send(res, err.status, { error: err.message });
      return send(res, 500, { error: 'codec server error' });
    }
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Reads at most `limit` bytes: a declared or actual length beyond it is answered 413 without buffering more (the rest
 * is drained, not kept, so the client still reads the answer).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `body is over ${limit} bytes`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd);
      req.resume();
      reject(tooLarge());
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).once('error', reject);
  });
}

function bytesField(value: unknown, field: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new HttpError(400, `${field}: must be a base64 string`);
  return Buffer.from(value, 'base64');
}

function parseBody(body: Buffer): Payload[] {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
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
