import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { firstIssue } from '../policies/zod-issues';

/**
 * Signed provider webhooks on Standard Webhooks (https://www.standardwebhooks.com), the scheme Svix, Clerk and
 * others share. A provider sends three headers:
 *
 *   webhook-id: <message id>           the same on every retry of one message: the router refuses a replay by it
 *   webhook-timestamp: <unix seconds>
 *   webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>"> [v1,<…> …]
 *
 * with its secret (`whsec_` and base64); during a rotation it may send one v1 per secret. The signatures are made
 * by the `standardwebhooks` package; the router checks the timestamp against its own clock and tolerance (the
 * package's fixed 5 minutes and wall clock would not let tests move the clock), then compares the RAW body's
 * signature under every secret it holds for that provider (two during a rotation: any match counts) with every v1
 * sent, in constant time.
 *
 * Pure functions of their arguments (the clock is passed in), so they are unit-tested without a server.
 */

/** The message ID header: the same on every retry of one message. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
/** When the message was signed, in unix seconds. */
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
/** The signatures: `v1,<base64>`, space-separated, one per secret the provider signs with. */
export const SIGNATURE_HEADER = 'webhook-signature';
/** How far a signature's timestamp may be from the router's clock, either way: Standard Webhooks' 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** Standard Webhooks secrets are 24 to 64 random bytes; anything shorter is guessable or a mistake. */
export const MIN_SECRET_BYTES = 24;
const MAX_ID_LENGTH = 255;

/** Why a webhook signature is refused. */
export type VerifyFailure =
  /** No webhook-signature header at all. */
  | 'unsigned'
  /** A webhook-id or webhook-timestamp missing or malformed, or no `v1,<base64>` signature. */
  | 'malformed'
  /** Signed, but too long ago (or too far in the future). */
  | 'stale'
  /**
   * Well-formed and fresh, but no v1 matches any current secret: forged, or signed with a retired or unknown secret.
   */
  | 'mismatch'
  /** The router holds no secret for this provider. */
  | 'no-secret';

/** A verified delivery's message id and timestamp, or why it was refused. */
export type VerifyResult =
  { ok: true; id: string; timestamp: number } | { ok: false; failure: VerifyFailure; reason: string };

/** Whether `secret` is a usable Standard Webhooks secret (`whsec_` optional, base64 of at least 24 bytes). */
export function isUsableSecret(secret: string): boolean {
  const base64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(base64) && Buffer.from(base64, 'base64').length >= MIN_SECRET_BYTES;
}

/** The webhook-signature value a provider sends: one `v1,<base64>` per secret (more than one only while it rotates). */
export function signatureHeader(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  rawBody: Buffer | string,
): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  const at = new Date(timestampSeconds * 1000);
  return list.map((secret) => new Webhook(secret).sign(id, at, toBytes(rawBody))).join(' ');
}

/**
 * All three Standard Webhooks headers of a signed delivery (webhook-id, webhook-timestamp, webhook-signature), as a
 * provider sends them to `/webhooks/<provider>` and the router verifies them.
 *
 * @param secrets - the provider's `whsec_` secret, or several while it rotates (one `v1,` signature each)
 * @param id - the message ID: the same on every retry of one event (the router refuses a second delivery of it)
 * @param timestampSeconds - when it was signed, in unix seconds (the router refuses one outside its tolerance)
 * @param rawBody - the exact bytes posted: the signature covers them, not a re-serialization
 *
 * @example
 * ```ts
 * const body = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded', idempotencyKey: key, data: { id: 'ch_1' } });
 * const headers = webhookHeaders(secret, 'evt_1', Math.floor(Date.now() / 1000), body);
 * await fetch(`${routerUrl}/webhooks/payments`, { method: 'POST', headers, body });
 * ```
 */
export function webhookHeaders(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  rawBody: Buffer | string,
): Record<string, string> {
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestampSeconds),
    [SIGNATURE_HEADER]: signatureHeader(secrets, id, timestampSeconds, rawBody),
  };
}

/** Checks a delivery's Standard Webhooks headers against the raw body, the secrets and the tolerance. */
export function verifySignature(input: {
  /** The three Standard Webhooks headers of one delivery, lower-case names; absent ones undefined. */
  headers: Partial<Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>>;
  rawBody: Buffer;
  secrets: readonly string[];
  nowSeconds: number;
  toleranceSeconds?: number;
}): VerifyResult {
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const secrets = input.secrets.filter(isUsableSecret);
  const refuse = (failure: VerifyFailure, reason: string): VerifyResult => ({ ok: false, failure, reason });
  if (secrets.length === 0) return refuse('no-secret', 'no signing secret is configured for this provider');
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = input.headers;
  if (signature === undefined || signature.trim() === '') return refuse('unsigned', 'no webhook-signature header');
  if (id === undefined || id.length === 0 || id.length > MAX_ID_LENGTH) {
    return refuse('malformed', `webhook-id must be 1 to ${MAX_ID_LENGTH} characters`);
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return refuse('malformed', 'webhook-timestamp must be unix seconds');
  }
  const sent = signature.split(' ').filter((s) => /^v1,[A-Za-z0-9+/]+={0,2}$/.test(s));
  if (sent.length === 0) return refuse('malformed', 'webhook-signature has no v1,<base64> signature');
  const skew = input.nowSeconds - Number(timestamp);
  if (Math.abs(skew) > tolerance) {
    return refuse('stale', `signature timestamp is ${skew} s from the router's clock (tolerance ${tolerance} s)`);
  }
  // Compare every signature sent against every secret, without stopping early, in constant time per pair.
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signatureHeader(secret, id, Number(timestamp), input.rawBody));
    for (const candidate of sent.map((s) => Buffer.from(s))) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  if (!matched) return refuse('mismatch', 'no v1 signature matches a current secret of this provider');
  return { ok: true, id, timestamp: Number(timestamp) };
}

function toBytes(body: Buffer | string): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/**
 * The router's secrets, by provider name (the path segment of /webhooks/<provider>). A list per provider: the
 * current secret and, during a rotation, the previous one. RETRYSAFE_WEBHOOK_SECRETS holds this as JSON, e.g.
 * {"payments": ["whsec_new…", "whsec_old…"], "email": ["whsec_…"]}; a single string stands for a list of one,
 * and empty strings are ignored (docker-compose.yml always lists an optional previous secret).
 */
export const WebhookSecrets = z.record(
  z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a provider name is lower-case letters, digits and dashes'),
  z
    .union([z.string(), z.array(z.string())])
    // Empty entries are dropped, so a deployment can always list a previous secret that is usually unset.
    .transform((v) => (typeof v === 'string' ? [v] : v).filter((secret) => secret !== ''))
    .pipe(
      z
        .array(
          z
            .string()
            .refine(
              isUsableSecret,
              `a signing secret is whsec_ and the base64 of at least ${MIN_SECRET_BYTES} random bytes (Standard Webhooks)`,
            ),
        )
        .min(1, 'at least one secret per provider')
        .max(2, 'at most two secrets per provider (current and previous, during a rotation)'),
    ),
);
export type WebhookSecrets = z.infer<typeof WebhookSecrets>;

/** Parses RETRYSAFE_WEBHOOK_SECRETS; the error names the provider and the problem, never a secret. */
export function parseWebhookSecrets(json: string | undefined): WebhookSecrets {
  if (json === undefined || json.trim() === '') {
    throw new Error('RETRYSAFE_WEBHOOK_SECRETS is not set: the router refuses every webhook without signing secrets');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('RETRYSAFE_WEBHOOK_SECRETS is not JSON; expected {"<provider>": ["<secret>", ...]}');
  }
  const parsed = WebhookSecrets.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new Error(`RETRYSAFE_WEBHOOK_SECRETS.${field}: ${message}`);
  }
  if (Object.keys(parsed.data).length === 0) throw new Error('RETRYSAFE_WEBHOOK_SECRETS names no provider');
  return parsed.data;
}

/**
 * Message IDs (webhook-id) already accepted, per provider, so a captured delivery cannot be played again. An ID is held
 * a little longer than the tolerance (after that its signature is stale anyway) and at most `capacity` per
 * provider. In memory: a restarted router forgets, which is why the action also ignores an event ID it has
 * seen (workflows/action-state.ts).
 */
export class SeenEvents {
  private readonly byProvider = new Map<string, Map<string, number>>();

  constructor(
    private readonly retainMs = (DEFAULT_TOLERANCE_SECONDS + 60) * 1000,
    private readonly capacity = 100_000,
  ) {}

  /**
   * Claims an ID; false when it was already claimed (a replay). Synchronous, so two concurrent copies cannot both pass.
   */
  claim(provider: string, eventId: string, nowMs: number): boolean {
    let seen = this.byProvider.get(provider);
    if (!seen) this.byProvider.set(provider, (seen = new Map()));
    const until = seen.get(eventId);
    if (until !== undefined && until > nowMs) return false;
    seen.delete(eventId);
    seen.set(eventId, nowMs + this.retainMs);
    this.prune(seen, nowMs);
    return true;
  }

  /** Gives an ID back when routing failed before the action heard of it, so the provider's retry is accepted. */
  release(provider: string, eventId: string): void {
    this.byProvider.get(provider)?.delete(eventId);
  }

  private prune(seen: Map<string, number>, nowMs: number): void {
    // Insertion order is expiry order (every entry has the same retention), so expired ones are at the front.
    for (const [id, until] of seen) {
      if (until > nowMs && seen.size <= this.capacity) break;
      seen.delete(id);
    }
  }
}

/** The three Standard Webhooks headers of one delivery, lower-case names; absent ones undefined. */
export type WebhookHeaders = Parameters<typeof verifySignature>[0]['headers'];
