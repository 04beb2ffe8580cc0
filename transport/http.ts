import { context, propagation } from '@opentelemetry/api';
import type { Json } from '../policies/tool';
import { PROVIDER_REQUEST_TIMEOUT_MS } from '../policies/timeouts';
import {
  ambiguous,
  committed,
  notCommitted,
  outcomeOfStatus,
  type StatusRules,
  type ToolOutcome,
} from '../policies/tool-outcome';

/**
 * An HTTP client for tools that talk JSON over fetch, and the helpers that map any client's answers and
 * errors onto the four tool outcomes. It sorts every failure into what a retry may assume:
 *   not-sent   the request never left (connection refused): any retry is safe
 *   answered   the provider answered with an error status: outcomeOfStatus says what it proves (429, and what
 *              the provider documents, nothing done; 5xx may have committed; 4xx refused)
 *   ambiguous  the request may have arrived (reset after send, dropped socket, timeout): only a key or a
 *              lookup makes a retry safe
 */
export interface ProviderResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

/**
 * A request that got no HTTP answer. `certainty` says whether it surely never left (`not-sent`: refused connection,
 * unknown host) or may have arrived (`ambiguous`: reset, timeout).
 */
export class ProviderTransportError extends Error {
  constructor(
    readonly certainty: 'not-sent' | 'ambiguous',
    message: string,
  ) {
    super(message);
    this.name = 'ProviderTransportError';
  }
}

/**
 * One JSON request to a provider: where, what, the idempotency key header when the tool sends one, and how long to
 * wait.
 */
export interface ProviderRequest {
  baseUrl: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  /** Defaults to PROVIDER_REQUEST_TIMEOUT_MS. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Sends one request with fetch and reads the JSON answer. Throws ProviderTransportError when no HTTP answer arrives, so
 * `outcomeOfError` can tell "never sent" from "may have arrived".
 */
export async function providerRequest(req: ProviderRequest): Promise<ProviderResponse> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.idempotencyKey) headers['idempotency-key'] = req.idempotencyKey;
  // The trace this request belongs to (traceparent, tracestate), when the process traces; nothing otherwise.
  propagation.inject(context.active(), headers);
  const signals = [
    AbortSignal.timeout(req.timeoutMs ?? PROVIDER_REQUEST_TIMEOUT_MS),
    ...(req.signal ? [req.signal] : []),
  ];
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

/** The `error.code` string of a JSON error body (Stripe-style), if there is one. */
export function errorCodeFromBody(body: unknown): string | undefined {
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The `error.message` string of a JSON error body, if there is one. */
export function errorMessageFromBody(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}

/**
 * The outcome a thrown error means, for any common client: fetch (`TypeError` with a `cause.code`),
 * node:http (`code` on the error), SDK errors carrying an HTTP `statusCode` or `status` (Stripe, OpenAI,
 * most REST SDKs), and this module's ProviderTransportError. An error it cannot place is `ambiguous`:
 * the request may have reached the provider, and only the tool's contract can make a retry safe.
 */
export function outcomeOfError(
  err: unknown,
  what = 'request',
  rules: StatusRules = {},
): Exclude<ToolOutcome, { outcome: 'committed' }> {
  if (err instanceof ProviderTransportError) {
    return err.certainty === 'not-sent' ? notCommitted(err.message) : ambiguous(err.message);
  }
  const e = err as {
    code?: unknown;
    cause?: { code?: unknown; message?: unknown };
    statusCode?: unknown;
    status?: unknown;
    message?: unknown;
    name?: unknown;
  };
  const message = `${what}: ${typeof e?.message === 'string' ? e.message : String(err)}`;
  const status =
    typeof e?.statusCode === 'number' ? e.statusCode : typeof e?.status === 'number' ? e.status : undefined;
  if (status !== undefined)
    return outcomeOfStatus(status, message, rules) ?? ambiguous(`${message} (HTTP ${status} thrown as an error)`);
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  if (code && NOT_SENT_CODES.has(code)) return notCommitted(`${message} (${code})`);
  return ambiguous(code ? `${message} (${code})` : message);
}

/**
 * The outcome of a provider's HTTP answer: 2xx is committed with the reference `refOf` reads from the
 * body (an answer without one is ambiguous, since something was committed but we cannot name it);
 * other statuses as `outcomeOfStatus` maps them, with what the provider documents (`notCommittedStatuses`).
 * `replayed`: the provider said it answered from its memory of the key.
 */
export function outcomeOfResponse(
  res: ProviderResponse,
  refOf: (body: unknown) => unknown,
  options: StatusRules & { replayed?: boolean } = {},
): ToolOutcome {
  const { replayed = false, ...rules } = options;
  const problem = outcomeOfStatus(res.status, describeResponse(res), rules);
  if (problem) return problem;
  const ref = refOf(res.body);
  if (typeof ref !== 'string' || ref === '')
    return ambiguous(`HTTP ${res.status} carried no reference the tool could read`);
  return committed(ref, (res.body ?? null) as Json, replayed);
}

function describeResponse(res: ProviderResponse): string {
  const code = errorCodeFromBody(res.body) ?? `http_${res.status}`;
  const detail = errorMessageFromBody(res.body);
  return `HTTP ${res.status} ${code}${detail ? `: ${detail}` : ''}`;
}
