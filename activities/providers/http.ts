/**
 * The one HTTP path from retrysafe to a provider. It sorts every failure into what a retry may assume:
 *   not-sent   the request never left (connection refused): any retry is safe
 *   rejected   the provider answered with an error status: it says nothing was committed for 429/5xx
 *   ambiguous  the request may have arrived (reset after send, dropped socket, timeout): only a key or a
 *              lookup makes a retry safe
 */
export interface ProviderResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

export class ProviderTransportError extends Error {
  constructor(
    readonly certainty: 'not-sent' | 'ambiguous',
    message: string,
  ) {
    super(message);
    this.name = 'ProviderTransportError';
  }
}

export interface ProviderRequest {
  baseUrl: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export async function providerRequest(req: ProviderRequest): Promise<ProviderResponse> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.idempotencyKey) headers['idempotency-key'] = req.idempotencyKey;
  const signals = [AbortSignal.timeout(req.timeoutMs), ...(req.signal ? [req.signal] : [])];
  let res: Response;
  try {
    res = await fetch(new URL(req.path, req.baseUrl), {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    throw classifyTransportError(err, `${req.method} ${req.path}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    // Headers arrived, then the body was cut: the provider processed the request.
    throw classifyTransportError(err, `${req.method} ${req.path} (reading body)`, 'ambiguous');
  }
  let body: unknown = undefined;
  if (text.length) {
    try {
      body = JSON.parse(text);
    } catch {
      body = { raw: text.slice(0, 500) };
    }
  }
  return { status: res.status, body, headers: res.headers };
}

function classifyTransportError(err: unknown, what: string, force?: 'ambiguous'): ProviderTransportError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
  const name = (err as { name?: string }).name;
  const detail = code ?? name ?? 'error';
  const message = `${what}: ${detail}${cause?.message ? ` (${cause.message})` : ''}`;
  if (!force && code && NOT_SENT_CODES.has(code)) return new ProviderTransportError('not-sent', message);
  return new ProviderTransportError('ambiguous', message);
}

export function errorCodeFromBody(body: unknown): string | undefined {
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

export function errorMessageFromBody(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}
