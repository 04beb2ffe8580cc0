import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { z } from 'zod';
import { RetrysafeError } from './errors';
import { canonicalJson } from './request-hash';
import { firstIssue } from './zod-issues';

/**
 * Signed human approvals. An approval is bound to one action key and one request hash, expires soon,
 * and is signed with an Ed25519 key that only the approval service holds: the agent, the planner and
 * the workflow see public keys only, so nothing a model writes can pass as a person's decision.
 *
 *   operator ─token─▶ approval service ─signed claims─▶ client ─update─▶ action workflow
 *                                                                       └─ verifyApproval (validator) ─▶ act
 *
 * Verification is pure and synchronous so it can run in a Temporal update validator: a refused
 * approval never enters the workflow's history.
 */

/** 10 min: long enough to read a dry run and decide, short enough that the facts it showed are still current. */
export const DEFAULT_APPROVAL_TTL_MS = 10 * 60 * 1000;
/** 1 h: an approval valid for longer outlives the volatile facts it was given, so it is refused. */
export const MAX_APPROVAL_TTL_MS = 60 * 60 * 1000;
/** 30 s: tolerated difference between the approval service's clock and the workflow's, for issuedAt only. */
export const APPROVAL_CLOCK_SKEW_MS = 30 * 1000;
/** Prefixed to the signed bytes so an approval signature can never be replayed as any other signed message. */
export const APPROVAL_SIGNING_DOMAIN = 'retrysafe-approval-v1\n';

const hex = (bytes: number) => new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);
const isoInstant = z.iso.datetime({ error: 'must be an ISO-8601 UTC timestamp like 2026-08-28T10:00:00.000Z' });

export const ApprovalClaims = z.strictObject({
  key: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(255),
  requestHash: z.string({ error: 'must be a string' }).regex(/^[0-9a-f]{64}$/, {
    error: 'must be a lower-case hex SHA-256',
  }),
  approver: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(100),
  decision: z.enum(['approve', 'reject'], { error: 'must be "approve" or "reject"' }),
  issuedAt: isoInstant,
  expiresAt: isoInstant,
  nonce: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_-]{16,128}$/, {
    error: 'must be 16 to 128 letters, digits, "_" or "-"',
  }),
});
export type ApprovalClaims = z.infer<typeof ApprovalClaims>;

export const SignedApproval = z.strictObject({
  claims: ApprovalClaims,
  signature: z
    .string({ error: 'must be a string' })
    .regex(hex(64), { error: 'must be a 64-byte hex Ed25519 signature' }),
  publicKeyId: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(100),
});
export type SignedApproval = z.infer<typeof SignedApproval>;

/** Key id → hex Ed25519 public key, as the workflow is given them. */
export const TrustedApprovalKeys = z
  .record(z.string().min(1).max(100), z.string().regex(hex(32), { error: 'must be a 32-byte hex Ed25519 public key' }))
  .refine((keys) => Object.keys(keys).length > 0, { error: 'must list at least one key' });
export type TrustedApprovalKeys = z.infer<typeof TrustedApprovalKeys>;

export const APPROVAL_REJECTION_REASONS = [
  'malformed',
  'unsigned',
  'unknown-key',
  'bad-signature',
  'wrong-action',
  'hash-mismatch',
  'expired',
  'not-yet-valid',
  'expiry-too-long',
] as const;
export type ApprovalRejectionReason = (typeof APPROVAL_REJECTION_REASONS)[number];

/** The exact bytes an approval's signature covers: the domain prefix, then the claims' canonical JSON. */
export function approvalSigningBytes(claims: ApprovalClaims): Uint8Array {
  return utf8ToBytes(APPROVAL_SIGNING_DOMAIN + canonicalJson(claims));
}

/**
 * Checks a received approval and returns its claims. In order: shape, signature present, key trusted,
 * signature valid, then (only once the claims are authentic) bound to this action and request hash and
 * inside its validity window. A `reject` decision verifies like an `approve`; the caller acts on it.
 * Throws `ApprovalRejected` with `details.reason` and a message meant for the person who sent it.
 */
export function verifyApproval(
  approval: unknown,
  expected: { key: string; requestHash: string },
  trustedKeys: Record<string, string>,
  nowMs: number,
): ApprovalClaims {
  const reject = (reason: ApprovalRejectionReason, message: string, extra: Record<string, unknown> = {}) =>
    new RetrysafeError('ApprovalRejected', message, { reason, key: expected.key, ...extra });

  if (typeof approval !== 'object' || approval === null || Array.isArray(approval)) {
    throw reject('malformed', 'an approval must be a JSON object { claims, signature, publicKeyId }', {
      field: '(root)',
    });
  }
  const signature = (approval as { signature?: unknown }).signature;
  if (signature === undefined || signature === null || signature === '') {
    throw reject('unsigned', 'the approval carries no signature; only approvals signed by the approval service count', {
      field: 'signature',
    });
  }
  const parsed = SignedApproval.safeParse(approval);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw reject('malformed', `the approval is malformed: ${field}: ${message}`, { field });
  }
  const { claims, publicKeyId } = parsed.data;

  const publicKey = Object.prototype.hasOwnProperty.call(trustedKeys, publicKeyId)
    ? trustedKeys[publicKeyId]
    : undefined;
  if (publicKey === undefined) {
    throw reject(
      'unknown-key',
      `the approval is signed with key ${JSON.stringify(publicKeyId)}, which this worker does not trust`,
      {
        publicKeyId,
      },
    );
  }
  if (typeof publicKey !== 'string' || !hex(32).test(publicKey)) {
    throw reject(
      'unknown-key',
      `trusted key ${JSON.stringify(publicKeyId)} is not a 32-byte hex Ed25519 public key; ` +
        "fix the worker's configuration",
      {
        publicKeyId,
      },
    );
  }
  let valid = false;
  try {
    // zip215: false is RFC 8032's strict check, which refuses non-canonical encodings of signatures and keys.
    valid = ed25519.verify(parsed.data.signature, approvalSigningBytes(claims), publicKey, { zip215: false });
  } catch {
    valid = false;
  }
  if (!valid) {
    throw reject(
      'bad-signature',
      `the approval's signature does not match its claims under key ${JSON.stringify(publicKeyId)}`,
      {
        publicKeyId,
      },
    );
  }

  if (claims.key !== expected.key) {
    throw reject('wrong-action', `the approval is for action ${claims.key}, not ${expected.key}`, {
      approvedKey: claims.key,
    });
  }
  if (claims.requestHash !== expected.requestHash) {
    throw reject(
      'hash-mismatch',
      `the approval covers request ${claims.requestHash.slice(0, 12)}…, but action ${expected.key} now carries ` +
        `${expected.requestHash.slice(0, 12)}…; review the current dry run and approve that`,
      { approvedHash: claims.requestHash, requestHash: expected.requestHash },
    );
  }

  const issuedMs = Date.parse(claims.issuedAt);
  const expiresMs = Date.parse(claims.expiresAt);
  if (!(expiresMs > issuedMs)) {
    throw reject('malformed', 'the approval expires before it was issued', { field: 'claims.expiresAt' });
  }
  if (expiresMs - issuedMs > MAX_APPROVAL_TTL_MS) {
    throw reject(
      'expiry-too-long',
      `the approval is valid for ${Math.round((expiresMs - issuedMs) / 1000)} s; ` +
        `at most ${MAX_APPROVAL_TTL_MS / 1000} s is accepted`,
    );
  }
  if (issuedMs > nowMs + APPROVAL_CLOCK_SKEW_MS) {
    throw reject(
      'not-yet-valid',
      `the approval is issued at ${claims.issuedAt}, in the future; check the approval service's clock`,
    );
  }
  if (nowMs >= expiresMs) {
    throw reject(
      'expired',
      `the approval expired at ${claims.expiresAt}; review the dry run again and send a fresh approval`,
    );
  }
  return claims;
}

/**
 * Signs claims with a hex Ed25519 private key. Used only by the approval service, which is the only
 * holder of the key. Throws `InvalidIntent` naming the field when the claims are malformed.
 */
export function signApproval(claims: ApprovalClaims, privateKeyHex: string, publicKeyId: string): SignedApproval {
  const parsed = ApprovalClaims.safeParse(claims);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `approval claims: ${field}: ${message}`, { field });
  }
  if (!hex(32).test(privateKeyHex)) {
    throw new RetrysafeError('InvalidIntent', 'the signing key must be a 32-byte hex Ed25519 private key', {
      field: 'privateKeyHex',
    });
  }
  const signature = bytesToHex(ed25519.sign(approvalSigningBytes(parsed.data), privateKeyHex));
  return { claims: parsed.data, signature, publicKeyId };
}

/** The hex public key of a hex Ed25519 private key. */
export function approvalPublicKey(privateKeyHex: string): string {
  return bytesToHex(ed25519.getPublicKey(privateKeyHex));
}

/** A stable default id for a public key: `ed25519-` and the first 16 hex digits of its SHA-256. */
export function approvalKeyId(publicKeyHex: string): string {
  return `ed25519-${bytesToHex(sha256(utf8ToBytes(publicKeyHex.toLowerCase()))).slice(0, 16)}`;
}

/**
 * The claims of a fresh approval: issued now, expiring after `ttlMs` (default DEFAULT_APPROVAL_TTL_MS).
 * The nonce comes from the caller because this module may not draw randomness.
 */
export function approvalClaims(input: {
  key: string;
  requestHash: string;
  approver: string;
  decision: ApprovalClaims['decision'];
  nowMs: number;
  nonce: string;
  ttlMs?: number;
}): ApprovalClaims {
  const ttlMs = input.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_APPROVAL_TTL_MS) {
    throw new RetrysafeError('InvalidIntent', `ttl must be between 1 ms and ${MAX_APPROVAL_TTL_MS} ms, got ${ttlMs}`, {
      field: 'ttl',
    });
  }
  return {
    key: input.key,
    requestHash: input.requestHash,
    approver: input.approver,
    decision: input.decision,
    issuedAt: new Date(input.nowMs).toISOString(),
    expiresAt: new Date(input.nowMs + ttlMs).toISOString(),
    nonce: input.nonce,
  };
}

/** Validates the trusted key table (from configuration); throws `InvalidIntent` naming the key id. */
export function parseTrustedApprovalKeys(raw: unknown): TrustedApprovalKeys {
  const parsed = TrustedApprovalKeys.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `trusted approval keys: ${field}: ${message}`, { field });
  }
  return parsed.data;
}
