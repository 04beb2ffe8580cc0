import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { FaultBook } from './faults';
import type { ArmedFault } from './faults';
import {
  canonicalJson,
  HttpError,
  invalidRequest,
  parseOrThrow,
  readJsonBody,
  Router,
  sendJson,
  sleep,
} from './http-kit';
import { FaultsRequest, PROVIDER_OPS, ProviderConfigPatch } from './types';
import type {
  InflightStatus,
  Ledger,
  LedgerRequest,
  OpCounts,
  ProviderConfig,
  ProviderKind,
  ProviderOp,
  RequestOutcome,
} from './types';
import { WebhookDispatcher } from './webhooks';

/**
 * The machinery every sandbox provider shares: in-memory collections, the mutation pipeline
 * (validate → before-commit fault → dedupe or commit → after-commit fault → reply), lagged list
 * reads, webhooks and the /admin endpoints. A provider module only declares schemas and commits.
 */

// A type alias, not an interface, so records stay assignable to the ledger's open record schema.
export type StoredRecord = { id: string; committedAt: string };

/** One kind of record. Ids are never reused within a process, even across /admin/reset. */
export class Collection<T extends StoredRecord> {
  private records: T[] = [];
  private nextNumber = 1;

  constructor(
    readonly name: string,
    private readonly idPrefix: string,
  ) {}

  insert(fields: Omit<T, 'id' | 'committedAt'>): T {
    const record = { id: `${this.idPrefix}_${this.nextNumber++}`, ...fields, committedAt: new Date().toISOString() };
    this.records.push(record as unknown as T);
    return record as unknown as T;
  }

  get(id: string): T | undefined {
    return this.records.find((record) => record.id === id);
  }

  all(): readonly T[] {
    return this.records;
  }

  clear(): void {
    this.records = [];
  }
}

export interface Rejection {
  status: number;
  code: string;
  message: string;
}

export function reject({ status, code, message }: Rejection): HttpError {
  return new HttpError(status, code, message);
}

export interface MutationSpec<S extends z.ZodType> {
  op: ProviderOp;
  /** Always POST. */
  path: string;
  schema: S;
  /**
   * 'idempotency-key': the Idempotency-Key header is required and replays or conflicts on it.
   * A function: the provider dedupes on that natural reference from the body. Absent: every
   * successful request is a new effect.
   */
  dedupe?: 'idempotency-key' | ((input: z.infer<S>) => string);
  /** Answer when a dedupe key comes back with different parameters. */
  conflict?: Rejection;
  /** Business refusal used by the decline and permanent-failure faults. */
  decline: Rejection;
  successStatus: number;
  /** Webhook event type sent after each commit. */
  event: string;
  reference?: (input: z.infer<S>) => string | undefined;
  /**
   * Synchronous on purpose: lookup and commit cannot interleave with another request.
   * Throw `reject(...)` to refuse.
   */
  commit(input: z.infer<S>, idempotencyKey: string | undefined): StoredRecord;
}

export interface PreparedMutation {
  fingerprint: string;
  naturalKey: string | undefined;
  reference: string | undefined;
  commit(idempotencyKey: string | undefined): StoredRecord;
}

export interface MutationRoute {
  op: ProviderOp;
  path: string;
  requiresKey: boolean;
  conflict: Rejection;
  decline: Rejection;
  successStatus: number;
  event: string;
  prepare(body: unknown): PreparedMutation;
}

const KEY_REUSED: Rejection = {
  status: 409,
  code: 'idempotency_key_reused',
  message:
    'Keys are for one request only: this Idempotency-Key was already used with different parameters. ' +
    'Send a new key for a new request.',
};

export function defineMutation<S extends z.ZodType>(spec: MutationSpec<S>): MutationRoute {
  return {
    op: spec.op,
    path: spec.path,
    requiresKey: spec.dedupe === 'idempotency-key',
    conflict: spec.conflict ?? KEY_REUSED,
    decline: spec.decline,
    successStatus: spec.successStatus,
    event: spec.event,
    prepare(body) {
      const input = parseOrThrow(spec.schema, body);
      return {
        fingerprint: canonicalJson(input),
        naturalKey: typeof spec.dedupe === 'function' ? spec.dedupe(input) : undefined,
        reference: spec.reference?.(input),
        commit: (idempotencyKey) => spec.commit(input, idempotencyKey),
      };
    },
  };
}

/** A lagged list: only records committed at least readLagMs ago, filtered by exact query params. */
export interface LookupRoute {
  path: string;
  collection: Collection<StoredRecord>;
  filters: readonly string[];
}

/** Direct read by id; not lagged, like most real providers' GET /:id. */
export interface ReadRoute {
  path: string;
  collection: Collection<StoredRecord>;
  notFound: Rejection;
}

export interface ProviderDefinition {
  kind: ProviderKind;
  collections: readonly Collection<StoredRecord>[];
  mutations: readonly MutationRoute[];
  lookups: readonly LookupRoute[];
  reads: readonly ReadRoute[];
}

export interface ProviderServer {
  server: Server;
  /** Binds `host` (default 127.0.0.1, loopback only) and resolves to the port actually bound. */
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

interface KeyedResult {
  fingerprint: string;
  record: StoredRecord;
  /** When the key was stored (Date.now()): a key retention counts from here. */
  storedAtMs: number;
}

type MutationContext = Omit<LedgerRequest, 'outcome' | 'status' | 'recordId' | 'at'>;

type Counter = { inflight: number; committedButUnanswered: number };

export function createProviderServer(
  definition: ProviderDefinition,
  initial: ProviderConfig,
  log: Logger,
): ProviderServer {
  let config: ProviderConfig = { keyRetentionMs: null, ...initial };
  const faults = new FaultBook();
  let requests: LedgerRequest[] = [];
  const keyed = new Map<string, Map<string, KeyedResult>>();
  const counter: Counter = { inflight: 0, committedButUnanswered: 0 };
  const webhooks = new WebhookDispatcher(
    () => ({ url: config.webhookUrl, delayMs: config.webhookDelayMs, secret: config.webhookSecret }),
    log,
  );
  // The signing secret never leaves the process: not in an admin answer, not in a log line.
  const visibleConfig = () => ({ ...config, webhookSecret: config.webhookSecret === null ? null : '[set]' });
  const ops: readonly string[] = PROVIDER_OPS[definition.kind];

  function logRequest(entry: LedgerRequest): LedgerRequest {
    requests.push(entry);
    log.info(entry, 'mutation');
    return entry;
  }

  /**
   * What a key (or natural reference) answers with. An Idempotency-Key older than the configured retention is
   * forgotten here, as a provider that prunes keys would: the request becomes a new one; the record stays.
   */
  function storedUnder(op: string, key: string, isIdempotencyKey: boolean): KeyedResult | undefined {
    const stored = keyed.get(op)?.get(key);
    const retention = config.keyRetentionMs;
    if (stored && isIdempotencyKey && retention != null && Date.now() - stored.storedAtMs >= retention) {
      keyed.get(op)?.delete(key);
      log.info({ op, idempotencyKey: key, keyRetentionMs: retention }, 'idempotency key forgotten');
      return undefined;
    }
    return stored;
  }

  function remember(op: string, key: string, result: Omit<KeyedResult, 'storedAtMs'>): void {
    if (!keyed.has(op)) keyed.set(op, new Map());
    // A snapshot: a replay answers what the first request answered, even if the record changed since.
    keyed.get(op)?.set(key, { ...result, record: structuredClone(result.record), storedAtMs: Date.now() });
  }

  async function handleMutation(route: MutationRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
    counter.inflight += 1;
    try {
      const request = await validateMutation(route, req, res);
      if (!request) return;
      const { prepared, context } = request;

      const before = faults.takeBeforeCommit(route.op);
      if (before && before.kind !== 'delay') {
        strikeBeforeCommit(before, route, req, res, context);
        return;
      }
      if (before) {
        context.faults.push('delay');
        await sleep(before.delayMs);
      }

      const result = commitOrReplay(route, prepared, context);
      if (result instanceof HttpError) {
        sendJson(res, result.status, result.body, result.headers);
        return;
      }
      await reply(route, req, res, result.entry, result.record);
    } finally {
      counter.inflight -= 1;
    }
  }

  /** Bad input is answered here, before any fault is used up, and logged as 'invalid'. */
  async function validateMutation(route: MutationRoute, req: IncomingMessage, res: ServerResponse) {
    const context: MutationContext = { op: route.op, idempotencyKey: undefined, reference: undefined, faults: [] };
    try {
      const traceparent = headerValue(req, 'traceparent');
      if (traceparent) context.traceparent = traceparent;
      const body = await readJsonBody(req);
      context.idempotencyKey = route.requiresKey ? headerValue(req, 'idempotency-key') : undefined;
      if (route.requiresKey && !context.idempotencyKey) {
        throw invalidRequest('Idempotency-Key', 'The Idempotency-Key header is required for this request');
      }
      const prepared = route.prepare(body);
      context.reference = prepared.reference;
      return { prepared, context };
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      logRequest({ ...context, outcome: 'invalid', status: err.status, at: now() });
      sendJson(res, err.status, err.body, err.headers);
      return undefined;
    }
  }

  /** Synchronous from dedupe lookup to commit, so two requests with one key cannot both commit. */
  function commitOrReplay(
    route: MutationRoute,
    prepared: PreparedMutation,
    context: MutationContext,
  ): HttpError | { entry: LedgerRequest; record: StoredRecord } {
    const dedupeKey = route.requiresKey ? context.idempotencyKey : prepared.naturalKey;
    const previous = dedupeKey === undefined ? undefined : storedUnder(route.op, dedupeKey, route.requiresKey);
    if (previous && previous.fingerprint !== prepared.fingerprint) {
      logRequest({ ...context, outcome: 'conflict', status: route.conflict.status, at: now() });
      return reject(route.conflict);
    }
    if (previous) {
      const entry = logRequest({
        ...context,
        outcome: 'replayed',
        status: 200,
        recordId: previous.record.id,
        at: now(),
      });
      return { entry, record: previous.record };
    }

    let record: StoredRecord;
    try {
      record = prepared.commit(context.idempotencyKey);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      logRequest({ ...context, outcome: err.status === 400 ? 'invalid' : 'rejected', status: err.status, at: now() });
      return err;
    }
    if (dedupeKey !== undefined) remember(route.op, dedupeKey, { fingerprint: prepared.fingerprint, record });
    webhooks.emit({
      type: route.event,
      ...(route.requiresKey ? { idempotencyKey: context.idempotencyKey } : {}),
      ...(prepared.reference === undefined ? {} : { reference: prepared.reference }),
      data: structuredClone(record),
    });
    const entry = logRequest({
      ...context,
      outcome: 'committed',
      status: route.successStatus,
      recordId: record.id,
      at: now(),
    });
    return { entry, record };
  }

  /** The effect is committed (or replayed); an after-commit fault decides whether and when the caller hears. */
  async function reply(
    route: MutationRoute,
    req: IncomingMessage,
    res: ServerResponse,
    entry: LedgerRequest,
    record: StoredRecord,
  ): Promise<void> {
    counter.committedButUnanswered += 1;
    try {
      const after = faults.takeAfterCommit(route.op);
      if (after) entry.faults.push(after.kind);
      if (after?.kind === 'drop-after-commit') {
        delete entry.status;
        req.socket.destroy();
        return;
      }
      if (after?.kind === 'hold-after-commit') await sleep(after.delayMs);
      if (after?.kind === 'status-after-commit') {
        // The effect stands; the caller hears an error, as through a gateway that gave up on the answer.
        entry.status = after.status;
        sendJson(res, after.status, errorBody('upstream_unanswered', 'The upstream did not answer in time'));
        return;
      }
      const replayed = entry.outcome === 'replayed';
      sendJson(res, entry.status ?? 200, record, replayed ? { 'Idempotent-Replayed': 'true' } : {});
    } finally {
      counter.committedButUnanswered -= 1;
    }
  }

  function strikeBeforeCommit(
    fault: ArmedFault,
    route: MutationRoute,
    req: IncomingMessage,
    res: ServerResponse,
    context: MutationContext,
  ): void {
    const answer = faultAnswer(fault, route.decline);
    logRequest({
      ...context,
      faults: [...context.faults, fault.kind],
      outcome: `fault:${fault.kind}`,
      ...(answer ? { status: answer.status } : {}),
      at: now(),
    });
    if (!answer) {
      req.socket.destroy();
      return;
    }
    sendJson(res, answer.status, errorBody(answer.code, answer.message), answer.headers);
  }

  function ledger(): Ledger {
    const counts: Record<string, OpCounts> = {};
    for (const op of ops) counts[op] = { committed: 0, replayed: 0, rejected: 0, conflict: 0, invalid: 0, faulted: 0 };
    for (const { op, outcome } of requests) {
      const bucket = (counts[op] ??= { committed: 0, replayed: 0, rejected: 0, conflict: 0, invalid: 0, faulted: 0 });
      if (outcome.startsWith('fault:')) bucket.faulted += 1;
      else bucket[outcome as Exclude<RequestOutcome, `fault:${string}`>] += 1;
    }
    return {
      kind: definition.kind,
      records: Object.fromEntries(definition.collections.map((c) => [c.name, [...c.all()]])),
      requests,
      counts,
      inflight: counter.inflight,
      committedButUnanswered: counter.committedButUnanswered,
      webhooks: webhooks.list(),
    };
  }

  const router = new Router();
  router.on('GET', '/health', (_req, res) => sendJson(res, 200, { ok: true, kind: definition.kind }));

  for (const route of definition.mutations) {
    router.on('POST', route.path, (req, res) => handleMutation(route, req, res));
  }
  for (const lookup of definition.lookups) {
    router.on('GET', lookup.path, (_req, res, _params, url) => {
      const filters = [...url.searchParams.entries()];
      for (const [name] of filters) {
        if (!lookup.filters.includes(name)) {
          throw invalidRequest(
            name,
            `Unknown filter '${name}'; this list accepts: ${lookup.filters.join(', ') || 'none'}`,
          );
        }
      }
      const horizon = Date.now() - config.readLagMs;
      const data = lookup.collection
        .all()
        .filter((r) => Date.parse(r.committedAt) <= horizon)
        .filter((r) =>
          filters.every(([name, value]) => String((r as unknown as Record<string, unknown>)[name]) === value),
        );
      sendJson(res, 200, { data });
    });
  }
  for (const read of definition.reads) {
    router.on('GET', read.path, (_req, res, params) => {
      const record = read.collection.get(params.id ?? '');
      if (!record) throw reject(read.notFound);
      sendJson(res, 200, record);
    });
  }

  router
    .on('GET', '/admin/ledger', (_req, res) => sendJson(res, 200, ledger()))
    .on('GET', '/admin/inflight', (_req, res) => sendJson(res, 200, { ...counter } satisfies InflightStatus))
    .on('GET', '/admin/faults', (_req, res) => sendJson(res, 200, { faults: faults.list() }))
    .on('POST', '/admin/faults', async (req, res) => {
      const { faults: added } = parseOrThrow(FaultsRequest, await readJsonBody(req));
      added.forEach((fault, i) => {
        if (fault.op !== '*' && !ops.includes(fault.op)) {
          throw invalidRequest(
            `faults.${i}.op`,
            `Unknown op '${fault.op}' for ${definition.kind}; use '*' or one of: ${ops.join(', ')}`,
          );
        }
      });
      faults.add(added);
      sendJson(res, 200, { faults: faults.list() });
    })
    .on('DELETE', '/admin/faults', (_req, res) => {
      faults.clear();
      sendJson(res, 200, { faults: [] });
    })
    .on('GET', '/admin/config', (_req, res) => sendJson(res, 200, visibleConfig()))
    .on('POST', '/admin/config', async (req, res) => {
      const patch = parseOrThrow(ProviderConfigPatch, await readJsonBody(req));
      config = { ...config, ...patch };
      log.info({ config: visibleConfig() }, 'config changed');
      sendJson(res, 200, visibleConfig());
    })
    .on('POST', '/admin/reset', (_req, res) => {
      for (const collection of definition.collections) collection.clear();
      requests = [];
      keyed.clear();
      faults.clear();
      webhooks.reset();
      sendJson(res, 200, { ok: true });
    });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (!match) {
      sendJson(
        res,
        404,
        errorBody('not_found', `No route ${req.method} ${url.pathname} on the ${definition.kind} provider`),
      );
      return;
    }
    Promise.resolve()
      .then(() => match.handler(req, res, match.params, url))
      .catch((err: unknown) => {
        if (err instanceof HttpError) {
          sendJson(res, err.status, err.body, err.headers);
          return;
        }
        // A caller that hung up mid-body is routine in fault tests; anything else is a provider bug.
        if (req.destroyed) log.warn({ err }, 'request aborted by the caller');
        else log.error({ err }, 'unhandled error');
        sendJson(res, 500, errorBody('internal_error', err instanceof Error ? err.message : String(err)));
      });
  });

  return {
    server,
    listen: (port, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        webhooks.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What a before-commit fault answers; undefined means no answer at all (the socket is reset). */
function faultAnswer(
  fault: ArmedFault,
  decline: Rejection,
): (Rejection & { headers?: Record<string, string> }) | undefined {
  switch (fault.kind) {
    case 'reset':
      return undefined;
    case 'status-5xx':
      return {
        status: fault.status,
        code: 'provider_unavailable',
        message: 'Injected server error; nothing was committed',
      };
    case 'status-429':
      return {
        status: 429,
        code: 'rate_limited',
        message: 'Too many requests; nothing was committed; retry after 1 s',
        headers: { 'Retry-After': '1' },
      };
    default:
      return decline;
  }
}

function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

function now(): string {
  return new Date().toISOString();
}
