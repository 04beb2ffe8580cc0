import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { firstIssue } from '../policies/zod-issues';

/**
 * Signed provider webhooks, Stripe-style. A provider sends
 *
 *   Retrysafe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
 *
 * with its signing secret (during a rotation it may send one v1 per secret). The router verifies the RAW
 * body bytes, never a re-serialization, against every secret it holds for that provider (two during a
 * rotation: any match counts) and refuses a timestamp more than the tolerance away from its clock.
 *
 * Pure functions of their arguments (the clock is passed in), so they are unit-tested without a server.
 */

export const SIGNATURE_HEADER = 'retrysafe-signature';
/** How far a signature's timestamp may be from the router's clock, either way: Stripe's default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** A shorter secret is guessable or a configuration mistake (an empty string would let anyone sign). */
export const MIN_SECRET_LENGTH = 16;

/** Why a webhook signature is refused. */
export type VerifyFailure =
  /** No Retrysafe-Signature header at all. */
  | 'unsigned'
  /** A header that is not `t=<digits>,v1=<64 hex>[,v1=…]`. */
  | 'malformed'
  /** Signed, but too long ago (or too far in the future). */
  | 'stale'
  /**
   * Well-formed and fresh, but no v1 matches any current secret: forged, or signed with a retired or unknown secret.
   */
  | 'mismatch'
  /** The router holds no secret for this provider. */
  | 'no-secret';

/** A verified signature's timestamp, or why it was refused. */
export type VerifyResult = { ok: true; timestamp: number } | { ok: false; failure: VerifyFailure; reason: string };

export interface ParsedSignature {
  timestamp: number;
  signatures: string[];
}

/** Parses the header; undefined when it is malformed. Unknown schemes (v0, v2) are ignored, like Stripe does. */
export function parseSignatureHeader(header: string): ParsedSignature | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) return undefined;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return undefined;
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return undefined;
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined || signatures.length === 0) return undefined;
  return { timestamp, signatures };
}

/** The v1 signature of a body at a timestamp: hex HMAC-SHA256 of "<t>.<raw body>". */
export function computeSignature(secret: string, timestamp: number, rawBody: Buffer | string): string {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest('hex');
}

/** The header a provider sends: one v1 per secret (more than one only while it rotates). */
export function signatureHeader(
  secrets: string | readonly string[],
  timestamp: number,
  rawBody: Buffer | string,
): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${timestamp}`, ...list.map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`)].join(',');
}

/**
 * Checks a Retrysafe-Signature header (HMAC-SHA256 over timestamp and raw body, constant-time) and its age against the
 * tolerance.
 */
export function verifySignature(input: {
  header: string | undefined;
  rawBody: Buffer;
  secrets: readonly string[];
  nowSeconds: number;
  toleranceSeconds?: number;
}): VerifyResult {
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const secrets = input.secrets.filter((s) => s.length >= MIN_SECRET_LENGTH);
  if (secrets.length === 0)
    return { ok: false, failure: 'no-secret', reason: 'no signing secret is configured for this provider' };
  if (input.header === undefined || input.header.trim() === '') {
    return { ok: false, failure: 'unsigned', reason: 'no Retrysafe-Signature header' };
  }
  const parsed = parseSignatureHeader(input.header);
  if (!parsed)
    return { ok: false, failure: 'malformed', reason: 'Retrysafe-Signature is not t=<unix seconds>,v1=<hex>' };
  const skew = input.nowSeconds - parsed.timestamp;
  if (Math.abs(skew) > tolerance) {
    return {
      ok: false,
      failure: 'stale',
      reason: `signature timestamp is ${skew} s from the router's clock (tolerance ${tolerance} s)`,
    };
  }
  // Compare every candidate against every secret, without stopping early, in constant time per pair.
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(computeSignature(secret, parsed.timestamp, input.rawBody), 'hex');
    for (const candidate of parsed.signatures) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
    }
  }
  if (!matched) {
    return { ok: false, failure: 'mismatch', reason: 'no v1 signature matches a current secret of this provider' };
  }
  return { ok: true, timestamp: parsed.timestamp };
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
        .array(z.string().min(MIN_SECRET_LENGTH, `a signing secret has at least ${MIN_SECRET_LENGTH} characters`))
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
 * Event IDs already accepted, per provider, so a captured delivery cannot be played again. An ID is held
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
