import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { parseActionKey } from '../policies/action-key';
import { SA_KIND, SA_REFERENCE, SA_TENANT } from '../policies/search-attributes';
import { providerEventSignal, type ProviderEvent } from '../messages/action';
import { firstIssue } from '../policies/zod-issues';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  SeenEvents,
  verifySignature,
  type WebhookSecrets,
} from './webhook-signature';

/**
 * Provider webhooks and settlement events become evidence on the action they concern. Each provider posts
 * to its own path, /webhooks/<provider>, and signs every delivery (workers/webhook-signature.ts); the router
 * verifies the raw body against that provider's secrets and refuses unsigned, forged, stale, retired-secret
 * and replayed deliveries before it reads a field. An event names its action by our key (sent as
 * Idempotency-Key, or as the reference on key-less providers) or by the business reference the provider
 * knows (shipment or ticket reference), which every action records in the RetrysafeReference search
 * attribute. A reference carried by more than one action is ambiguous (two tenants may use the same one):
 * the router refuses to guess. Evidence is only evidence: the action cross-checks it (workflows/action.ts).
 */
export const WebhookBody = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  idempotencyKey: z.string().optional(),
  reference: z.string().optional(),
  /** The tenant the provider holds the effect for, when it knows one (a connected account): it must match. */
  tenant: z.string().min(1).optional(),
  data: z.looseObject({ id: z.string().min(1), tenant: z.string().min(1).optional() }),
});
export type WebhookBody = z.infer<typeof WebhookBody>;

export type RouteResult = { routed: true; key: string } | { routed: false; reason: string };

/** What the router answers one delivery: 202 routed, 200 verified but not routed, 4xx refused, 503 retry later. */
export interface DeliveryAnswer {
  status: number;
  body: { routed: boolean; key?: string; reason: string };
}

/** One webhook as it arrived: the provider, its signature header and raw body. */
export interface WebhookDelivery {
  /** The provider named by the path, /webhooks/<provider>. */
  provider: string;
  /** The Retrysafe-Signature header, as received. */
  signature: string | undefined;
  /** The body exactly as received: the signature covers these bytes, not a re-serialization. */
  rawBody: Buffer;
}

/** What the router logs through (a pino logger fits): structured fields, never a body. */
export interface WebhookLog {
  /** An accepted delivery. */
  info(fields: Record<string, unknown>, msg: string): void;
  /** A refused delivery, with why. */
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** What the router needs: a Temporal client, the signing secrets, and how to map an event to its action. */
export interface WebhookRouterDeps {
  client: Client;
  /** Signing secrets by provider name; a function is read on every delivery, so a rotation needs no restart. */
  secrets: WebhookSecrets | (() => WebhookSecrets);
  log?: WebhookLog;
  toleranceSeconds?: number;
  /** Milliseconds since the epoch; tests move the clock. */
  now?: () => number;
}

const FAILURE_TYPES = /\.(failed|declined|bounced|rejected)$/;
/** How many actions carrying one reference the router looks at; two are already one too many. */
const REFERENCE_MATCH_LIMIT = 10;
/** References go into a visibility query; anything else is refused rather than escaped. */
const QUERYABLE_REFERENCE = /^[\w.:@/#+-]{1,255}$/;

/**
 * The webhook router: verifies each delivery's signature and age, finds its action by key or provider reference, and
 * signals it as evidence. Refusals never reach a workflow.
 */
export function createWebhookRouter(deps: WebhookRouterDeps): {
  /** Handles one delivery and answers the HTTP status and body to send back. */
  receive(delivery: WebhookDelivery): Promise<DeliveryAnswer>;
} {
  const { client } = deps;
  const now = deps.now ?? Date.now;
  const secretsOf = (provider: string): readonly string[] | undefined => {
    const table = typeof deps.secrets === 'function' ? deps.secrets() : deps.secrets;
    return Object.hasOwn(table, provider) ? table[provider] : undefined;
  };
  const seen = new SeenEvents(((deps.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) + 60) * 1000);

  type Found = { key: string } | { refused: string } | undefined;

  async function findAction(event: WebhookBody): Promise<Found> {
    const tenant = event.tenant ?? event.data.tenant;
    const keys = [
      ...new Set([event.idempotencyKey, event.reference].filter((c): c is string => !!c && isActionKey(c))),
    ];
    if (keys.length > 1) return { refused: `event names two different actions (${keys.join(', ')})` };
    if (keys.length === 1) {
      const key = keys[0];
      const keyTenant = parseActionKey(key).tenant;
      if (tenant !== undefined && tenant !== keyTenant) {
        return { refused: `event is for tenant ${tenant}, but action ${key} belongs to tenant ${keyTenant}` };
      }
      return { key };
    }
    if (!event.reference) return undefined;
    if (!QUERYABLE_REFERENCE.test(event.reference)) {
      return { refused: 'event reference has characters the router does not query by' };
    }
    if (tenant !== undefined && !QUERYABLE_REFERENCE.test(tenant)) {
      return { refused: 'event tenant has characters the router does not query by' };
    }
    const query =
      `${SA_KIND.name} = 'action' AND ${SA_REFERENCE.name} = '${event.reference}'` +
      (tenant !== undefined ? ` AND ${SA_TENANT.name} = '${tenant}'` : '');
    // Every action carrying the reference, open or closed: a closed action of another tenant with the same
    // reference makes the event just as ambiguous as an open one.
    const matches: Array<{ key: string; tenant: string }> = [];
    for await (const wf of client.workflow.list({ query, pageSize: REFERENCE_MATCH_LIMIT })) {
      matches.push({ key: wf.workflowId, tenant: String(wf.typedSearchAttributes.get(SA_TENANT) ?? '?') });
      if (matches.length >= REFERENCE_MATCH_LIMIT) break;
    }
    if (matches.length === 0) return undefined;
    if (matches.length > 1) {
      const tenants = [...new Set(matches.map((m) => m.tenant))].sort();
      return {
        refused:
          tenants.length > 1
            ? `reference is carried by ${matches.length} actions of tenants ${tenants.join(', ')}; refusing to guess`
            : `reference is carried by ${matches.length} actions of tenant ${tenants[0]}; refusing to guess`,
      };
    }
    const [only] = matches;
    if (tenant !== undefined && only.tenant !== tenant) {
      return { refused: `event is for tenant ${tenant}, but action ${only.key} belongs to tenant ${only.tenant}` };
    }
    return { key: only.key };
  }

  /** Routes a verified event. Throws when Temporal could not be asked or told (the provider should retry). */
  async function route(event: WebhookBody, provider: string): Promise<RouteResult> {
    const found = await findAction(event);
    if (!found) return { routed: false, reason: `no action for event ${event.id} (${event.type})` };
    if ('refused' in found) {
      deps.log?.warn({ provider, eventId: event.id, type: event.type, reason: found.refused }, 'webhook not routed');
      return { routed: false, reason: found.refused };
    }
    const { key } = found;
    const evidence: ProviderEvent = {
      eventId: event.id,
      type: event.type,
      key,
      provider,
      providerRef: event.data.id,
      outcome: FAILURE_TYPES.test(event.type) ? 'failed' : 'succeeded',
      receivedAt: new Date(now()).toISOString(),
    };
    try {
      await client.workflow.getHandle(key).signal(providerEventSignal, evidence);
    } catch (err) {
      // A closed action already has its outcome; a late duplicate event changes nothing.
      if (err instanceof WorkflowNotFoundError) return { routed: false, reason: `action ${key} is closed` };
      throw err;
    }
    deps.log?.info({ provider, key, eventId: event.id, type: event.type }, 'webhook routed to action');
    return { routed: true, key };
  }

  /**
   * One delivery, from the raw bytes to an answer. Nothing of an unverified body is read, logged or
   * signalled; a refusal is logged with the provider, the reason and the body's length only.
   */
  async function receive(delivery: WebhookDelivery): Promise<DeliveryAnswer> {
    const { provider, rawBody } = delivery;
    const refuse = (status: number, reason: string, extra: Record<string, unknown> = {}): DeliveryAnswer => {
      deps.log?.warn({ provider, status, reason, bytes: rawBody.length, ...extra }, 'webhook refused');
      return { status, body: { routed: false, reason } };
    };
    const secrets = secretsOf(provider);
    if (!secrets) return refuse(404, `no provider ${provider} is configured`);
    const verified = verifySignature({
      header: delivery.signature,
      rawBody,
      secrets,
      nowSeconds: Math.floor(now() / 1000),
      toleranceSeconds: deps.toleranceSeconds,
    });
    if (!verified.ok) {
      const status = verified.failure === 'unsigned' || verified.failure === 'malformed' ? 400 : 401;
      return refuse(status, `signature ${verified.failure}: ${verified.reason}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return refuse(400, 'body is not JSON');
    }
    const parsed = WebhookBody.safeParse(raw);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      return refuse(400, `invalid event: ${field}: ${message}`);
    }
    const event = parsed.data;
    if (!seen.claim(provider, event.id, now())) {
      return refuse(400, `replayed: event ${event.id} was already accepted`, { eventId: event.id });
    }
    try {
      const result = await route(event, provider);
      return result.routed
        ? { status: 202, body: { routed: true, key: result.key, reason: 'routed' } }
        : { status: 200, body: { routed: false, reason: result.reason } };
    } catch (err) {
      // The action never heard of it: let the provider's retry through.
      seen.release(provider, event.id);
      deps.log?.warn({ provider, eventId: event.id, err: (err as Error).message }, 'webhook routing failed');
      return { status: 503, body: { routed: false, reason: (err as Error).message } };
    }
  }

  return { receive };
}

function isActionKey(value: string): boolean {
  try {
    parseActionKey(value);
    return true;
  } catch {
    return false;
  }
}

/** Where each provider posts: /webhooks/<provider>. */
const WEBHOOK_PATH = /^\/webhooks\/([a-z0-9][a-z0-9-]{0,62})\/?$/;
const MAX_BODY_BYTES = 256 * 1024;

/**
 * An HTTP endpoint for the router: POST /webhooks/<provider>, signed. Answers 202 when routed, 200 when
 * verified but not routed (no such action, closed, ambiguous), 400/401 when refused, 404 for an unknown
 * path or provider, 413 for a body over 256 KiB, 503 when Temporal could not be reached (retry).
 */
export async function startWebhookServer(
  router: ReturnType<typeof createWebhookRouter>,
  opts: { port?: number; host?: string } = {},
): Promise<{
  /** The server's base URL (`http://host:port/webhooks`). */
  url: string;
  /** The URL a provider posts its webhooks to. */
  urlFor(provider: string): string;
  /** Stops the server. */
  close(): Promise<void>;
  /** How many deliveries arrived, accepted or not. */
  received(): number;
}> {
  let received = 0;
  const answer = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const match = req.method === 'POST' ? WEBHOOK_PATH.exec(new URL(req.url ?? '/', 'http://x').pathname) : null;
    if (!match) {
      answer(res, 404, { routed: false, reason: 'POST signed events to /webhooks/<provider>' });
      req.resume();
      return;
    }
    const provider = match[1];
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      received++;
      if (tooLarge) {
        answer(res, 413, { routed: false, reason: `body over ${MAX_BODY_BYTES} bytes` });
        return;
      }
      const signature = req.headers[SIGNATURE_HEADER];
      router
        .receive({
          provider,
          signature: Array.isArray(signature) ? signature.join(',') : signature,
          rawBody: Buffer.concat(chunks),
        })
        .then(
          (result) => answer(res, result.status, result.body),
          (err: Error) => answer(res, 503, { routed: false, reason: err.message }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://${opts.host ?? '127.0.0.1'}:${port}/webhooks`;
  return {
    url: base,
    urlFor: (provider) => `${base}/${provider}`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
