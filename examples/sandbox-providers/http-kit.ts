import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { firstIssue } from 'retrysafe';

/** Bodies above this are refused before parsing; provider requests are a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** An answer that ends request processing: thrown anywhere, written once by the dispatcher. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }

  get body(): { error: { code: string; field?: string; message: string } } {
    return {
      error: { code: this.code, ...(this.field === undefined ? {} : { field: this.field }), message: this.message },
    };
  }
}

export function invalidRequest(field: string, message: string): HttpError {
  return new HttpError(400, 'invalid_request', message, field);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

export async function readJsonBody(req: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.trim() === '') throw invalidRequest('body', 'A JSON body is required');
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw invalidRequest('body', 'The body is not valid JSON');
  }
}

function tooLarge(limitBytes: number): HttpError {
  return new HttpError(413, 'payload_too_large', `The body exceeds ${limitBytes} bytes`, 'body');
}

/** Parses with a zod schema; the first issue becomes a 400 naming its field (dotted path). */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, fieldPrefix = ''): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = firstIssue(result.error, fieldPrefix ? [fieldPrefix] : []);
  const field = issue.field === '(root)' ? 'body' : issue.field;
  throw invalidRequest(field, `${field}: ${issue.message}`);
}

/** Keys sorted recursively, so two bodies with the same parameters compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}

export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, string>,
  url: URL,
) => Promise<void> | void;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

/** Method + path patterns with `:param` segments; no match is a 404, as on a real API. */
export class Router {
  private readonly routes: Route[] = [];

  on(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method, segments: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  match(method: string, pathname: string): { handler: RouteHandler; params: Record<string, string> } | undefined {
    const parts = pathname.split('/').filter(Boolean);
    for (const route of this.routes) {
      if (route.method !== method || route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const matches = route.segments.every((segment, i) => {
        if (segment.startsWith(':')) {
          const value = safeDecode(parts[i]);
          if (value === undefined) return false;
          params[segment.slice(1)] = value;
          return true;
        }
        return segment === parts[i];
      });
      if (matches) return { handler: route.handler, params };
    }
    return undefined;
  }
}

// A malformed %-escape in a path is a 404 like any unknown path, not a crash of the provider.
function safeDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

export function sleep(ms: number): Promise<void> {
  // Unref'd so a held or delayed request never keeps a stopping process alive.
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
