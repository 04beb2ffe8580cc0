import { setTimeout as delay } from 'node:timers/promises';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { isActionKey, parseActionKey } from '../policies/action-key';
import { SA_KIND, SA_REFERENCE, SA_TENANT } from '../policies/search-attributes';
import { providerEventSignal, type ProviderEvent } from '../messages/action';
import type { ActionLedger } from '../ledger/action-ledger';
import { isFinal } from '../policies/action-status';
import { RUN_HOLDER_PREFIX } from '../activities/record-ledger';
import { firstIssue } from '../policies/zod-issues';
import { listenHttp } from './http-listener';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  SeenEvents,
  WEBHOOK_ID_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  verifySignature,
  type WebhookSecrets,
} from './webhook-signature';

/**
 * Provider webhooks and settlement events become evidence on the action they concern. Each provider posts
 * to its own path, /webhooks/<provider>, and signs every delivery on Standard Webhooks
 * (workers/webhook-signature.ts), or its own way through a verifier of its own (Stripe's Stripe-Signature); the
 * router verifies the raw body against that provider's secrets and refuses unsigned, forged, stale,
 * retired-secret and replayed (by webhook-id) deliveries before it reads a field. An event names its action by our key (sent as
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

/** One webhook as it arrived: the provider, its headers and raw body. */
export interface WebhookDelivery {
  /** The provider named by the path, /webhooks/<provider>. */
  provider: string;
  /** The request's headers, by lower-case name (webhook-id, webhook-timestamp, webhook-signature, …). */
  headers: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received: the signature covers these bytes, not a re-serialization. */
  rawBody: Buffer;
}

/** A provider's own verifier (see `WebhookRouterDeps.verifiers`). */
export type ProviderEventVerifier = NonNullable<WebhookRouterDeps['verifiers']>[string];

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
  /**
   * Standard Webhooks secrets by provider name; a function is read on every delivery, so a rotation needs no
   * restart.
   */
  secrets: WebhookSecrets | (() => WebhookSecrets);
  /**
   * Providers that sign their own way (Stripe's `Stripe-Signature`, through its SDK), by name: their verifier is
   * used instead of secrets. It verifies one delivery and answers the event in the router's shape (WebhookBody)
   * with the ID to refuse replays by, or why it is refused (400 for a malformed or unsigned delivery, 401 for a
   * forged or stale one).
   */
  verifiers?: Readonly<
    Record<
      string,
      (delivery: {
        headers: Readonly<Record<string, string | undefined>>;
        rawBody: Buffer;
        nowMs: number;
      }) => { ok: true; messageId: string; event: unknown } | { ok: false; status: 400 | 401; reason: string }
    >
  >;
  log?: WebhookLog;
  toleranceSeconds?: number;
  /** Milliseconds since the epoch; tests move the clock. */
  now?: () => number;
  /**
   * The workers' ledger (its `get`), so that an event for an action without a workflow is told from one for a settled
   * action. A run acts on most actions itself, and an action workflow starts only when the run hands the action over
   * (an unknown outcome, a person to ask): an event that arrives between the two would otherwise find no workflow and
   * be dropped. With the ledger, the router holds such a delivery while the row is unsettled (up to
   * `unsettledWaitMs`), signals the action workflow once the run has handed it over, and answers 503 (the provider
   * retries) if it has not started by then. Without one, an event for an action with no workflow is answered as closed.
   */
  ledger?: Pick<ActionLedger, 'get'>;
  /** How long a delivery waits for an unsettled action's workflow before the router answers 503; 1.5 s by default. */
  unsettledWaitMs?: number;
  /**
   * How the router waits between two reads of the row; tests replace it.
   * @internal
   */
  sleep?: (ms: number) => Promise<void>;
}

const FAILURE_TYPES = /\.(failed|declined|bounced|rejected)$/;
/**
 * How long a delivery for an unsettled action with no workflow is held. A run's act settles its row within its send
 * (a webhook that races the reply waits a few milliseconds); one that hands over starts the action workflow within a
 * workflow task. Below the 2 s that senders commonly give an attempt, so a late start gets a 503 and a retry, not a
 * timeout.
 */
const UNSETTLED_WAIT_MS = 1_500;
/** Between two reads of an unsettled row. */
const UNSETTLED_POLL_MS = 50;
/** Between two signals to an action workflow that was not there yet. */
const UNSETTLED_SIGNAL_EVERY_MS = 250;
/** How many actions carrying one reference the router looks at; two are already one too many. */
const REFERENCE_MATCH_LIMIT = 10;
/** References go into a visibility query; anything else is refused rather than escaped. */
const QUERYABLE_REFERENCE = /^[\w.:@/#+-]{1,255}$/;

/** What verification yields: the event's body, unparsed, and the message ID that replays are refused by. */
type Verified = { ok: true; messageId: string; event: unknown } | { ok: false; status: number; reason: string };

/**
 * The webhook router: verifies each delivery's signature and age, finds its action by key or provider reference, and
 * signals it as evidence. Refusals never reach a workflow.
 */
export function createWebhookRouter(deps: WebhookRouterDeps): {
  /** Handles one delivery and answers the HTTP status and body to send back. */
  receive(delivery: WebhookDelivery): Promise<DeliveryAnswer>;
} {
  const now = deps.now ?? Date.now;
  const seen = new SeenEvents(((deps.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) + 60) * 1000);
  /**
   * Deliveries being routed now, by provider and message ID, with the answer each will give. A copy that arrives
   * meanwhile (a provider that stopped waiting and retried, or a storm of copies) waits for that answer, as long as
   * a hold may last, instead of guessing: a replay once the first is accepted, "not yet" (503) if the first could not
   * be routed or is still being routed.
   */
  const inFlight = new Map<string, Promise<DeliveryAnswer>>();

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
    const verified = verifyDelivery(deps, delivery, now());
    if (!verified.ok) return refuse(verified.status, verified.reason);
    const parsed = WebhookBody.safeParse(verified.event);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      return refuse(400, `invalid event: ${field}: ${message}`);
    }
    const event = parsed.data;
    const delivering = `${provider}\u0000${verified.messageId}`;
    if (!seen.claim(provider, verified.messageId, now())) {
      const first = inFlight.get(delivering);
      if (first) {
        const answer = await answerWithin(first, deps.unsettledWaitMs ?? UNSETTLED_WAIT_MS);
        if (!answer || answer.status === 503) {
          const why = answer ? 'could not be routed yet' : 'is still being routed';
          return refuse(503, `event ${verified.messageId} ${why}: deliver it again later`, { eventId: event.id });
        }
      }
      return refuse(400, `replayed: event ${verified.messageId} was already accepted`, { eventId: event.id });
    }
    const answer = routeOnce(provider, verified.messageId, event);
    inFlight.set(delivering, answer);
    try {
      return await answer;
    } finally {
      if (inFlight.get(delivering) === answer) inFlight.delete(delivering);
    }
  }

  /** Routes a delivery the router has not seen; a failure releases its ID so that the provider's retry is taken. */
  async function routeOnce(provider: string, messageId: string, event: WebhookBody): Promise<DeliveryAnswer> {
    try {
      const result = await route(deps, event, provider, now());
      return result.routed
        ? { status: 202, body: { routed: true, key: result.key, reason: 'routed' } }
        : { status: 200, body: { routed: false, reason: result.reason } };
    } catch (err) {
      seen.release(provider, messageId);
      deps.log?.warn({ provider, eventId: event.id, err: (err as Error).message }, 'webhook routing failed');
      return { status: 503, body: { routed: false, reason: (err as Error).message } };
    }
  }

  return { receive };
}

/** The first delivery's answer, or undefined when it takes longer than `ms` (a copy waits no longer than a hold). */
async function answerWithin(first: Promise<DeliveryAnswer>, ms: number): Promise<DeliveryAnswer | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([first, delay(ms, undefined, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

/** The provider's own verifier, else Standard Webhooks against its secrets; 404 for a provider with neither. */
function verifyDelivery(deps: WebhookRouterDeps, delivery: WebhookDelivery, nowMs: number): Verified {
  const { provider, headers, rawBody } = delivery;
  const verifier = deps.verifiers && Object.hasOwn(deps.verifiers, provider) ? deps.verifiers[provider] : undefined;
  if (verifier) return verifier({ headers, rawBody, nowMs });
  const table = typeof deps.secrets === 'function' ? deps.secrets() : deps.secrets;
  if (!Object.hasOwn(table, provider))
    return { ok: false, status: 404, reason: `no provider ${provider} is configured` };
  const verified = verifySignature({
    headers: {
      [WEBHOOK_ID_HEADER]: headers[WEBHOOK_ID_HEADER],
      [WEBHOOK_TIMESTAMP_HEADER]: headers[WEBHOOK_TIMESTAMP_HEADER],
      [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER],
    },
    rawBody,
    secrets: table[provider],
    nowSeconds: Math.floor(nowMs / 1000),
    ...(deps.toleranceSeconds !== undefined ? { toleranceSeconds: deps.toleranceSeconds } : {}),
  });
  if (!verified.ok) {
    const status = verified.failure === 'unsigned' || verified.failure === 'malformed' ? 400 : 401;
    return { ok: false, status, reason: `signature ${verified.failure}: ${verified.reason}` };
  }
  try {
    return { ok: true, messageId: verified.id, event: JSON.parse(rawBody.toString('utf8')) };
  } catch {
    return { ok: false, status: 400, reason: 'body is not JSON' };
  }
}

type Found = { key: string } | { refused: string } | undefined;

/** The action an event names by our key (as Idempotency-Key or as the reference), or a refusal. */
function findByKey(event: WebhookBody): Found {
  const tenant = event.tenant ?? event.data.tenant;
  const keys = [...new Set([event.idempotencyKey, event.reference].filter((c): c is string => !!c && isActionKey(c)))];
  if (keys.length > 1) return { refused: `event names two different actions (${keys.join(', ')})` };
  if (keys.length === 0) return undefined;
  const key = keys[0];
  const keyTenant = parseActionKey(key).tenant;
  if (tenant !== undefined && tenant !== keyTenant) {
    return { refused: `event is for tenant ${tenant}, but action ${key} belongs to tenant ${keyTenant}` };
  }
  return { key };
}

/** The one action that carries the event's business reference (of the event's tenant, when it names one). */
async function findByReference(client: Client, event: WebhookBody): Promise<Found> {
  const tenant = event.tenant ?? event.data.tenant;
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
    const whose = tenants.length > 1 ? `tenants ${tenants.join(', ')}` : `tenant ${tenants[0]}`;
    return { refused: `reference is carried by ${matches.length} actions of ${whose}; refusing to guess` };
  }
  const [only] = matches;
  if (tenant !== undefined && only.tenant !== tenant) {
    return { refused: `event is for tenant ${tenant}, but action ${only.key} belongs to tenant ${only.tenant}` };
  }
  return { key: only.key };
}

/** Routes a verified event. Throws when Temporal could not be asked or told (the provider should retry). */
async function route(
  deps: WebhookRouterDeps,
  event: WebhookBody,
  provider: string,
  nowMs: number,
): Promise<RouteResult> {
  const found = findByKey(event) ?? (await findByReference(deps.client, event));
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
    receivedAt: new Date(nowMs).toISOString(),
  };
  if (!(await signalEvidence(deps, key, evidence))) {
    // No workflow: a closed action (its outcome stands; a late duplicate event changes nothing), or one its run acts on.
    if (!deps.ledger) return { routed: false, reason: `action ${key} is closed` };
    const settled = await awaitActionWorkflow(deps, deps.ledger, key, evidence);
    if (settled) return { routed: false, reason: settled };
  }
  deps.log?.info({ provider, key, eventId: event.id, type: event.type }, 'webhook routed to action');
  return { routed: true, key };
}

/** Signals the evidence to its action workflow: false when there is none (never started, or closed). */
async function signalEvidence(deps: WebhookRouterDeps, key: string, evidence: ProviderEvent): Promise<boolean> {
  try {
    await deps.client.workflow.getHandle(key).signal(providerEventSignal, evidence);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * An action with no workflow, by its ledger row: settled or never claimed (why nothing is routed), or unsettled, held
 * by a run's act. Then the delivery waits for the row to settle or for the action workflow the run hands it over to
 * (signalled once it is there: undefined). Throws, for a 503, when neither happened in time.
 */
async function awaitActionWorkflow(
  deps: WebhookRouterDeps,
  ledger: NonNullable<WebhookRouterDeps['ledger']>,
  key: string,
  evidence: ProviderEvent,
): Promise<string | undefined> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => delay(ms));
  const startedMs = now();
  const until = startedMs + (deps.unsettledWaitMs ?? UNSETTLED_WAIT_MS);
  let signalledMs = startedMs;
  for (;;) {
    const row = await ledger.get(key);
    if (!row) return `no action ${key} is on record`;
    if (isFinal(row.status)) return `action ${key} is settled (${row.status}) and has no workflow: its outcome stands`;
    // Unsettled: a run's act still holds it (the event raced its reply), or the act handed it over and the action
    // workflow is starting (it takes the row over once it runs).
    const handedOver = row.status === 'unknown' || !row.holder?.startsWith(RUN_HOLDER_PREFIX);
    if (handedOver && now() - signalledMs >= UNSETTLED_SIGNAL_EVERY_MS) {
      signalledMs = now();
      if (await signalEvidence(deps, key, evidence)) return undefined;
    }
    if (now() >= until) {
      throw new Error(`action ${key} is ${row.status} and its workflow has not started yet: deliver it again`);
    }
    await sleep(UNSETTLED_POLL_MS);
  }
}

/** Where each provider posts: /webhooks/<provider>. */
const PROVIDER_PATH = '/webhooks/:provider{[a-z0-9][a-z0-9-]{0,62}}';
const MAX_BODY_BYTES = 256 * 1024;

/**
 * An HTTP endpoint for the router, on Hono: POST /webhooks/<provider>, signed. Answers 202 when routed, 200 when
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
  // Not strict: /webhooks/<provider>/ is the same endpoint.
  const app = new Hono({ strict: false });
  app.post(
    PROVIDER_PATH,
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        received++;
        return c.json({ routed: false, reason: `body over ${MAX_BODY_BYTES} bytes` }, 413);
      },
    }),
    async (c) => {
      const rawBody = Buffer.from(await c.req.arrayBuffer());
      received++;
      const result = await router
        .receive({ provider: c.req.param('provider'), headers: c.req.header(), rawBody })
        .catch((err: Error): DeliveryAnswer => ({ status: 503, body: { routed: false, reason: err.message } }));
      return c.json(result.body, result.status as 200);
    },
  );
  app.notFound((c) => c.json({ routed: false, reason: 'POST signed events to /webhooks/<provider>' }, 404));
  const host = opts.host ?? '127.0.0.1';
  const listener = await listenHttp(app, { port: opts.port ?? 0, host });
  const base = `http://${host}:${listener.port}/webhooks`;
  return {
    url: base,
    urlFor: (provider) => `${base}/${provider}`,
    received: () => received,
    close: listener.close,
  };
}
