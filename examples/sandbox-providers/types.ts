import { z } from 'zod';

/**
 * Admin-side contract of the sandbox providers: kinds, operations, faults, ledger, config and the
 * startup line. Tests and scripts validate every admin response against these schemas.
 */

export const ProviderKind = z.enum(['payments', 'email', 'tickets', 'inventory', 'shipping']);
export type ProviderKind = z.infer<typeof ProviderKind>;
export const PROVIDER_KINDS: readonly ProviderKind[] = ProviderKind.options;

/** The mutating operations of each kind; faults target one of them or '*'. */
export const PROVIDER_OPS = {
  payments: ['charges.create', 'refunds.create'],
  email: ['messages.create'],
  tickets: ['tickets.create'],
  inventory: ['reservations.create', 'releases.create'],
  shipping: ['shipments.create'],
} as const satisfies Record<ProviderKind, readonly string[]>;
export type ProviderOp = (typeof PROVIDER_OPS)[ProviderKind][number];

/** Faults that strike before the provider commits; the effect does not happen. */
export const BEFORE_COMMIT_FAULTS = [
  'delay',
  'status-5xx',
  'status-429',
  'reset',
  'decline',
  'permanent-failure',
] as const;
/**
 * Faults that strike after the provider committed; the effect happened, the reply is lost, late, or an error
 * (`status-after-commit`: a gateway in front of the provider gives up on its answer and says 502 or 504).
 */
export const AFTER_COMMIT_FAULTS = ['drop-after-commit', 'hold-after-commit', 'status-after-commit'] as const;

export const FaultKind = z.enum([...BEFORE_COMMIT_FAULTS, ...AFTER_COMMIT_FAULTS]);
export type FaultKind = z.infer<typeof FaultKind>;

export const Fault = z
  .strictObject({
    op: z.string().min(1),
    kind: FaultKind,
    /** How many matching requests it strikes; ignored by permanent-failure. Default 1. */
    times: z.int().positive().optional(),
    /** Required by delay and hold-after-commit. */
    delayMs: z.int().nonnegative().max(600_000).optional(),
    /** status-5xx (default 503, the sandbox's documented "nothing done") and status-after-commit (default 502). */
    status: z.int().min(500).max(599).optional(),
  })
  .superRefine((fault, ctx) => {
    if ((fault.kind === 'delay' || fault.kind === 'hold-after-commit') && fault.delayMs === undefined) {
      ctx.addIssue({ code: 'custom', path: ['delayMs'], message: `delayMs is required for ${fault.kind}` });
    }
    if (fault.status !== undefined && fault.kind !== 'status-5xx' && fault.kind !== 'status-after-commit') {
      ctx.addIssue({
        code: 'custom',
        path: ['status'],
        message: 'status only applies to status-5xx and status-after-commit',
      });
    }
  });
export type Fault = z.infer<typeof Fault>;

export const FaultsRequest = z.strictObject({ faults: z.array(Fault) });
export type FaultsRequest = z.infer<typeof FaultsRequest>;

export const RequestOutcome = z.union([
  z.enum(['committed', 'replayed', 'rejected', 'conflict', 'invalid']),
  z.templateLiteral(['fault:', FaultKind]),
]);
export type RequestOutcome = z.infer<typeof RequestOutcome>;

/** Every provider record carries its id and the instant it was committed; the rest is kind-specific. */
export const ProviderRecord = z.looseObject({ id: z.string(), committedAt: z.iso.datetime() });
export type ProviderRecord = z.infer<typeof ProviderRecord>;

export const LedgerRequest = z.object({
  op: z.string(),
  idempotencyKey: z.string().optional(),
  reference: z.string().optional(),
  /** committed/replayed even when an after-commit fault then lost or held the reply (see `faults`). */
  outcome: RequestOutcome,
  /** HTTP status sent; absent when the socket was destroyed instead. */
  status: z.int().optional(),
  recordId: z.string().optional(),
  faults: z.array(FaultKind),
  at: z.iso.datetime(),
  /** The request's W3C trace context header, when the caller traces (what a tracing backend would join on). */
  traceparent: z.string().optional(),
});
export type LedgerRequest = z.infer<typeof LedgerRequest>;

export const OpCounts = z.object({
  committed: z.int(),
  replayed: z.int(),
  rejected: z.int(),
  conflict: z.int(),
  invalid: z.int(),
  /** Requests stopped by a before-commit fault (outcome 'fault:<kind>'). */
  faulted: z.int(),
});
export type OpCounts = z.infer<typeof OpCounts>;

export const WebhookDelivery = z.object({
  eventId: z.string(),
  type: z.string(),
  url: z.string(),
  attempts: z.int(),
  delivered: z.boolean(),
  lastError: z.string().optional(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const Ledger = z.object({
  kind: ProviderKind,
  records: z.record(z.string(), z.array(ProviderRecord)),
  requests: z.array(LedgerRequest),
  counts: z.record(z.string(), OpCounts),
  inflight: z.int(),
  committedButUnanswered: z.int(),
  webhooks: z.array(WebhookDelivery),
});
export type Ledger = z.infer<typeof Ledger>;

export const InflightStatus = z.object({ inflight: z.int(), committedButUnanswered: z.int() });
export type InflightStatus = z.infer<typeof InflightStatus>;

export const ProviderConfig = z.object({
  readLagMs: z.int().nonnegative(),
  webhookUrl: z.url().nullable(),
  webhookDelayMs: z.int().nonnegative(),
  /**
   * Signs every webhook as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with this
   * `whsec_` secret; null sends them unsigned. Write-only: GET /admin/config answers only whether one is set.
   */
  webhookSecret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/, 'a webhook signing secret is whsec_ and base64 (Standard Webhooks)')
    .nullable(),
  /**
   * How long an Idempotency-Key is remembered after the request it came with committed; null (the default)
   * keeps keys for the process's life. Once forgotten, a request with that key is a new one (a second charge),
   * while the records stay: lists by `idempotencyKey` or reference still find the first. Keys only: a natural
   * reference (shipping's `shipmentRef`) is never forgotten.
   */
  keyRetentionMs: z.int().nonnegative().nullable().optional(),
});
export type ProviderConfig = z.infer<typeof ProviderConfig>;

export const ProviderConfigPatch = ProviderConfig.partial().strict();
export type ProviderConfigPatch = z.infer<typeof ProviderConfigPatch>;

export const WebhookEvent = z.object({
  id: z.string(),
  type: z.string(),
  idempotencyKey: z.string().optional(),
  reference: z.string().optional(),
  data: ProviderRecord,
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const ApiErrorBody = z.object({
  error: z.object({ code: z.string(), field: z.string().optional(), message: z.string() }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/** The one line a provider process prints on stdout once it accepts connections. */
export const ListeningLine = z.object({
  event: z.literal('listening'),
  kind: ProviderKind,
  port: z.int().positive(),
  url: z.url(),
});
export type ListeningLine = z.infer<typeof ListeningLine>;
