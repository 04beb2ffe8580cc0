import {
  PROVIDER_REQUEST_TIMEOUT_MS,
  absent,
  found,
  outcomeOfError,
  outcomeOfResponse,
  providerRequest,
  type Json,
  type LookupAnswer,
  type ToolContext,
  type ToolOutcome,
} from 'retrysafe';

/**
 * How the example tools talk to the sandbox providers (examples/sandbox-providers): JSON over HTTP, a
 * 201 for a new effect and a 200 with `Idempotent-Replayed: true` for a key it remembers, the effect's
 * `id` in the body, and list lookups answering `{ data: [...] }`. These shapes are the sandbox's, not
 * the engine's: a tool for another provider reads its own.
 */
export interface SandboxRoute {
  baseUrl: string;
  path: string;
  /** Send the action key as the Idempotency-Key header. */
  sendsKey: boolean;
}

/**
 * The sandbox providers document their 503 as a load shedder's answer before any work (examples/sandbox-providers);
 * their 500, 502 and 504 prove nothing, as a real gateway's do.
 */
export const SANDBOX_STATUS_RULES = { notCommittedStatuses: [503] } as const;

export async function sandboxPost(
  route: SandboxRoute,
  body: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  try {
    const res = await providerRequest({
      baseUrl: route.baseUrl,
      method: 'POST',
      path: route.path,
      body,
      ...(route.sendsKey ? { idempotencyKey: ctx.key } : {}),
      timeoutMs: PROVIDER_REQUEST_TIMEOUT_MS,
      signal: ctx.signal,
    });
    const replayed = res.headers.get('idempotent-replayed') === 'true' || res.status === 200;
    return outcomeOfResponse(res, (b) => (b as { id?: unknown } | undefined)?.id, {
      replayed,
      ...SANDBOX_STATUS_RULES,
    });
  } catch (err) {
    return outcomeOfError(err, `POST ${route.path}`, SANDBOX_STATUS_RULES);
  }
}

/** A lagging list lookup; throws when the provider cannot be asked, since that proves nothing. */
export async function sandboxLookup(baseUrl: string, pathAndQuery: string, ctx: ToolContext): Promise<LookupAnswer> {
  const res = await providerRequest({
    baseUrl,
    method: 'GET',
    path: pathAndQuery,
    timeoutMs: PROVIDER_REQUEST_TIMEOUT_MS,
    signal: ctx.signal,
  });
  if (res.status !== 200) throw new Error(`lookup ${pathAndQuery} answered HTTP ${res.status}`);
  const data = (res.body as { data?: Array<{ id?: unknown }> } | undefined)?.data ?? [];
  const first = data[0];
  if (!first) return absent(`GET ${pathAndQuery}: empty`);
  if (typeof first.id !== 'string') throw new Error(`lookup ${pathAndQuery} answered a record without an id`);
  return found(
    first.id,
    first as Json,
    `GET ${pathAndQuery}: ${first.id}${data.length > 1 ? ` (+${data.length - 1} more)` : ''}`,
  );
}

export const query = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;
export const money = (cents: number, currency = 'usd') => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;
