import { ed25519, verifyStrict } from './ed25519';
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import type { z } from 'zod';
import { builtOnFirstUse, loadZod } from './built-on-first-use';
import { RetrysafeError } from './errors';
import type { Expect, Same } from './same-type';
import { canonicalJson } from './request-hash';
import { firstIssue } from './zod-issues';

/**
 * Signed human decisions: every command a person gives an action or a run (approve, reject, resolve,
 * accept a risk, raise a ceiling, resume, cancel) travels as one envelope. It is bound to its target
 * (action key or run ID), tenant, decision and parameters, and, for actions, the request hash; it names
 * its operator, expires soon, carries a nonce, and is signed with an Ed25519 key that only the approval
 * service holds. The agent, the planner, the CLI and the workflow see public keys only, so nothing a
 * model or a script writes can pass as a person's decision.
 *
 *   operator ─token─▶ approval service ─signed claims─▶ client / ops CLI ─update─▶ workflow
 *                                                                  └─ verifyDecision (validator) ─▶ act
 *
 * The workflow checks the envelope against what the worker's configuration trusts: the approval keys,
 * and each operator's tenants and roles. Verification is pure and synchronous so it runs in a Temporal
 * update validator: a refused decision never enters the workflow's history.
 */

/** 10 min: long enough to read a dry run and decide, short enough that the facts it showed are still current. */
export const DEFAULT_APPROVAL_TTL_MS = 10 * 60 * 1000;
/** 1 h: an approval valid for longer outlives the volatile facts it was given, so it is refused. */
export const MAX_APPROVAL_TTL_MS = 60 * 60 * 1000;
/** 30 s: tolerated difference between the approval service's clock and the workflow's, for issuedAt only. */
export const APPROVAL_CLOCK_SKEW_MS = 30 * 1000;
/** Prefixed to the signed bytes so a decision's signature can never be replayed as any other signed message. */
export const DECISION_SIGNING_DOMAIN = 'retrysafe-decision-v1\n';

/** Every command a person gives; each needs one role. */
export const DECISIONS = ['approve', 'reject', 'resolve', 'accept-risk', 'raise-ceiling', 'resume', 'cancel'] as const;
/** A command a person gives: approve, reject, resolve, accept-risk, raise-ceiling, resume or cancel. */
export type Decision = (typeof DECISIONS)[number];
/** The roles an operator may hold. */
export const ROLES = ['approver', 'resolver', 'admin'] as const;
/** An operator's role: approver, resolver or admin. */
export type Role = (typeof ROLES)[number];
/** approver: confirms or refuses a dry run; resolver: settles what the system could not; admin: steers runs. */
export const ROLE_FOR: Record<Decision, Role> = {
  approve: 'approver',
  reject: 'approver',
  resolve: 'resolver',
  'accept-risk': 'resolver',
  'raise-ceiling': 'admin',
  resume: 'admin',
  cancel: 'admin',
};

const hex = (bytes: number) => new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);

/**
 * The schemas of decisions, built on first use (built-on-first-use.ts): at the module's top level they took about a
 * third of every workflow's CPU on its worker thread, decision or not. A workflow that waits for one builds them before
 * it shows that it waits (`DecisionGate.prepare`), so the task that receives the decision does not pay for them either.
 */
function buildDecisionSchemas() {
  const z = loadZod();
  const isoInstant = z.iso.datetime({ error: 'must be an ISO-8601 UTC timestamp like 2026-08-28T10:00:00.000Z' });

  /**
   * What an operator signs: the decision, the key and request hash it is bound to, tenant, operator, parameters, expiry
   * and nonce.
   */
  const DecisionClaims = z.strictObject({
    decision: z.enum(DECISIONS, { error: `must be one of ${DECISIONS.join(', ')}` }),
    /** The action key, or the run's workflow ID for run decisions. */
    key: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(255),
    tenant: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/, {
      error: 'must be a tenant identifier',
    }),
    /** The action's request hash; absent only for run decisions. */
    requestHash: z
      .string({ error: 'must be a string' })
      .regex(/^[0-9a-f]{64}$/, { error: 'must be a lower-case hex SHA-256' })
      .optional(),
    /** The decision's parameters (an outcome, a new limit, a reason), covered by the signature. */
    params: z.record(z.string(), z.unknown()).optional(),
    operator: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(100),
    issuedAt: isoInstant,
    expiresAt: isoInstant,
    nonce: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_-]{16,128}$/, {
      error: 'must be 16 to 128 letters, digits, "_" or "-"',
    }),
  });

  /** Decision claims with the approval service's Ed25519 signature and key id; verified inside the workflow. */
  const SignedDecision = z.strictObject({
    claims: DecisionClaims,
    signature: z
      .string({ error: 'must be a string' })
      .regex(hex(64), { error: 'must be a 64-byte hex Ed25519 signature' }),
    publicKeyId: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(100),
  });

  /** Key id → hex Ed25519 public key, as the workflow is given them. */
  const TrustedApprovalKeys = z
    .record(
      z.string().min(1).max(100),
      z.string().regex(hex(32), { error: 'must be a 32-byte hex Ed25519 public key' }),
    )
    .refine((keys) => Object.keys(keys).length > 0, { error: 'must list at least one key' });

  /** What one operator may do: the tenants it acts for (`*` for all) and its roles. */
  const OperatorScope = z.strictObject({
    tenants: z.array(z.string().regex(/^(\*|[A-Za-z0-9][A-Za-z0-9._-]{0,79})$/, { error: 'must be a tenant or "*"' })),
    roles: z.array(z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` })),
  });
  /** Operator name → scope, from the worker's configuration (the operators file), never from a message. */
  const OperatorScopes = z.record(z.string().min(1).max(100), OperatorScope);

  const reason = z
    .string({ error: 'is required: why, for the audit trail' })
    .trim()
    .min(3, { error: 'must say why, in a few words' })
    .max(500, { error: 'must be at most 500 characters' });

  /** The parameters each decision carries inside its signed envelope (`claims.params`). */
  const DECISION_PARAMS = {
    approve: z.strictObject({ reason: reason.optional() }),
    reject: z.strictObject({ reason: reason.optional() }),
    resolve: z
      .strictObject({
        outcome: z.enum(['confirmed', 'not-happened', 'failed', 'compensate'], {
          error: 'must be one of confirmed, not-happened, failed, compensate',
        }),
        reason,
        providerRef: z.string().min(1).max(200).optional(),
      })
      .refine((p) => p.outcome !== 'confirmed' || p.providerRef !== undefined, {
        error: 'confirming by hand needs the providerRef seen at the provider',
        path: ['providerRef'],
      }),
    'accept-risk': z.strictObject({ reason }),
    'raise-ceiling': z.strictObject({
      ceiling: z.string().min(1).max(60),
      newLimit: z.number().int().positive(),
      reason,
    }),
    resume: z.strictObject({ reason }),
    cancel: z.strictObject({ reason }),
  } as const satisfies Record<Decision, z.ZodType>;
  return { DecisionClaims, SignedDecision, TrustedApprovalKeys, OperatorScope, OperatorScopes, DECISION_PARAMS };
}

/** The schemas of signed decisions and their parameters, of operator scopes and trusted keys. */
export type DecisionSchemas = ReturnType<typeof buildDecisionSchemas>;

/** The schemas of this module, built on first use (in a workflow, once per workflow that needs them). */
export const decisionSchemas: () => DecisionSchemas = builtOnFirstUse(buildDecisionSchemas);

/**
 * What an operator signs: the decision, the key and request hash it is bound to, tenant, operator, parameters, expiry
 * and nonce.
 */
export interface DecisionClaims {
  decision: Decision;
  /** The action key, or the run's workflow ID for run decisions. */
  key: string;
  tenant: string;
  /** The action's request hash; absent only for run decisions. */
  requestHash?: string | undefined;
  /** The decision's parameters (a resolution's outcome, a ceiling's new limit, a reason), covered by the signature. */
  params?: Record<string, unknown> | undefined;
  operator: string;
  /** ISO-8601 UTC. */
  issuedAt: string;
  /** ISO-8601 UTC. */
  expiresAt: string;
  nonce: string;
}
/** Decision claims with the approval service's Ed25519 signature and key id; verified inside the workflow. */
export interface SignedDecision {
  claims: DecisionClaims;
  /** Hex Ed25519 signature of decisionSigningBytes(claims). */
  signature: string;
  publicKeyId: string;
}
/** Key id → hex Ed25519 public key, as the workflow is given them. */
export type TrustedApprovalKeys = Record<string, string>;
/**
 * Operator name → what that operator may do: the tenants it acts for (`*` for all) and its roles. From the worker's
 * configuration (the operators file), never from a message.
 */
export type OperatorScopes = Record<string, { tenants: string[]; roles: Role[] }>;
/** What one operator may do. */
export type OperatorScope = OperatorScopes[string];

/** The interfaces above are what the schemas parse to: a change to either side that makes them differ fails here. */
export type _DecisionTypesMatchSchemas = [
  Expect<Same<DecisionClaims, z.output<DecisionSchemas['DecisionClaims']>>>,
  Expect<Same<SignedDecision, z.output<DecisionSchemas['SignedDecision']>>>,
  Expect<Same<TrustedApprovalKeys, z.output<DecisionSchemas['TrustedApprovalKeys']>>>,
  Expect<Same<OperatorScope, z.output<DecisionSchemas['OperatorScope']>>>,
  Expect<Same<OperatorScopes, z.output<DecisionSchemas['OperatorScopes']>>>,
];
export type DecisionParams<D extends Decision> = z.output<DecisionSchemas['DECISION_PARAMS'][D]>;

/**
 * Why a signed decision is refused: the reason a RetrysafeError carries to the client, the ops CLI and the approval
 * page.
 */
export const DECISION_REJECTION_REASONS = [
  'malformed',
  'unsigned',
  'unknown-key',
  'bad-signature',
  'wrong-decision',
  'wrong-action',
  'wrong-tenant',
  'hash-mismatch',
  'expired',
  'not-yet-valid',
  'expiry-too-long',
  'unknown-operator',
  'missing-role',
  'missing-tenant',
  'replayed',
] as const;
/**
 * Refusals a workflow gives before verifying (workflows/signed-decisions.ts, action-state.ts): it is not at
 * a point that takes this decision.
 */
export const NOT_WAITING_REASONS = [
  'not-awaiting-confirmation',
  'not-ready',
  'not-waiting',
  'refreshed-recently',
  'refreshed-too-often',
  'trust-unavailable',
] as const;

/** What a workflow trusts when it checks a decision: approval keys and operator scopes, both from configuration. */
export interface DecisionTrust {
  keys: Record<string, string>;
  operators: OperatorScopes;
}

/** What the receiving workflow expects of a decision. */
export interface ExpectedDecision {
  /** The decisions this message may carry (the approve update takes approve and reject). */
  decisions: readonly Decision[];
  key: string;
  tenant: string;
  /** Required to match when given (action decisions); run decisions carry none. */
  requestHash?: string;
  /** True when this nonce was already used on this workflow. */
  nonceUsed?: (nonce: string) => boolean;
}
export type DecisionRejectionReason = (typeof DECISION_REJECTION_REASONS)[number];

/** The exact bytes a decision's signature covers: the domain prefix, then the claims' canonical JSON. */
export function decisionSigningBytes(claims: DecisionClaims): Uint8Array {
  return utf8ToBytes(DECISION_SIGNING_DOMAIN + canonicalJson(claims));
}

/**
 * Checks a received decision and returns its claims. In order: shape, signature present, key trusted,
 * signature valid; then (only once the claims are authentic) the decision kind, target, tenant and
 * request hash this workflow expects, the validity window, the operator's role and tenants, and the
 * nonce. A `reject` verifies like an `approve`; the caller acts on it. Throws `DecisionRejected` with
 * `details.reason` (and `details.missing` naming a missing scope) and a message for the person who sent it.
 */
export function verifyDecision(
  approval: unknown,
  expected: ExpectedDecision,
  trust: DecisionTrust,
  nowMs: number,
): DecisionClaims {
  const trustedKeys = trust.keys;
  const reject = (reason: DecisionRejectionReason, message: string, extra: Record<string, unknown> = {}) =>
    new RetrysafeError('DecisionRejected', message, { reason, key: expected.key, ...extra });

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
  // Without zod's compiled fast path: in a workflow, zod and this schema are evaluated afresh for each workflow, so
  // the one parse an approval gets would pay for compiling it first (about 0.3 ms of the approver's wait).
  const parsed = decisionSchemas().SignedDecision.safeParse(approval, { jitless: true });
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
    // RFC 8032's strict check (zip215 off), which refuses non-canonical encodings of signatures and keys.
    valid = verifyStrict(parsed.data.signature, decisionSigningBytes(claims), publicKey);
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

  if (!expected.decisions.includes(claims.decision)) {
    throw reject(
      'wrong-decision',
      `a ${claims.decision} decision does not belong here; this takes ${expected.decisions.join(' or ')}`,
      { decision: claims.decision },
    );
  }
  if (claims.key !== expected.key) {
    throw reject('wrong-action', `the decision is for ${claims.key}, not ${expected.key}`, {
      approvedKey: claims.key,
    });
  }
  if (claims.tenant !== expected.tenant) {
    throw reject('wrong-tenant', `the decision is for tenant ${claims.tenant}, not ${expected.tenant}`, {
      tenant: claims.tenant,
    });
  }
  if (expected.requestHash !== undefined && claims.requestHash !== expected.requestHash) {
    throw reject(
      'hash-mismatch',
      `the decision covers request ${String(claims.requestHash).slice(0, 12)}…, but action ${expected.key} now carries ` +
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
      `the decision expired at ${claims.expiresAt}; review the action again and send a fresh decision`,
    );
  }

  // Authentic and current: now the operator's scope, from configuration, decides whether it counts.
  const scope = Object.prototype.hasOwnProperty.call(trust.operators, claims.operator)
    ? trust.operators[claims.operator]
    : undefined;
  if (!scope) {
    throw reject('unknown-operator', `operator ${claims.operator} has no scope in this worker's operators file`, {
      operator: claims.operator,
    });
  }
  const role = ROLE_FOR[claims.decision];
  if (!scope.roles.includes(role)) {
    throw reject(
      'missing-role',
      `operator ${claims.operator} lacks the ${role} role that ${claims.decision} needs (has: ${scope.roles.join(', ') || 'none'})`,
      { operator: claims.operator, missing: `role:${role}` },
    );
  }
  if (!scope.tenants.includes('*') && !scope.tenants.includes(claims.tenant)) {
    throw reject('missing-tenant', `operator ${claims.operator} is not an operator of tenant ${claims.tenant}`, {
      operator: claims.operator,
      missing: `tenant:${claims.tenant}`,
    });
  }
  if (expected.nonceUsed?.(claims.nonce)) {
    throw reject('replayed', `this decision (nonce ${claims.nonce.slice(0, 8)}…) was already used; sign a fresh one`, {
      nonce: claims.nonce,
    });
  }
  return claims;
}

/** Validates operator scopes from configuration; throws `InvalidIntent` naming the operator and field. */
export function parseOperatorScopes(raw: unknown): OperatorScopes {
  const parsed = decisionSchemas().OperatorScopes.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `operator scopes: ${field}: ${message}`, { field });
  }
  return parsed.data;
}

/**
 * Signs claims with a hex Ed25519 private key. Used only by the approval service, which is the only
 * holder of the key. Throws `InvalidIntent` naming the field when the claims are malformed.
 */
export function signDecision(claims: DecisionClaims, privateKeyHex: string, publicKeyId: string): SignedDecision {
  return signDecisionWith(claims, publicKeyId, (bytes) => {
    checkSigningKey(privateKeyHex);
    return ed25519.sign(bytes, privateKeyHex);
  });
}

/** Throws `InvalidIntent` naming `privateKeyHex` unless it is a 32-byte hex Ed25519 private key. */
export function checkSigningKey(privateKeyHex: string): void {
  if (!hex(32).test(privateKeyHex)) {
    throw new RetrysafeError('InvalidIntent', 'the signing key must be a 32-byte hex Ed25519 private key', {
      field: 'privateKeyHex',
    });
  }
}

/**
 * Signs claims with `sign`, which returns the Ed25519 signature of the bytes it is given: how a Node.js approval
 * service signs with its runtime's native Ed25519 (cli/approvals/native-signing.ts), several times faster than the
 * pure JavaScript that signDecision uses so that this module also loads in a workflow. Ed25519 signatures are
 * deterministic, so both give the same bytes. Throws `InvalidIntent` naming the field when the claims are malformed.
 */
export function signDecisionWith(
  claims: DecisionClaims,
  publicKeyId: string,
  sign: (bytes: Uint8Array) => Uint8Array,
): SignedDecision {
  const parsed = decisionSchemas().DecisionClaims.safeParse(claims);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `approval claims: ${field}: ${message}`, { field });
  }
  const signature = bytesToHex(sign(decisionSigningBytes(parsed.data)));
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
export function decisionClaims(input: {
  decision: Decision;
  key: string;
  tenant: string;
  requestHash?: string;
  params?: Record<string, unknown>;
  operator: string;
  nowMs: number;
  nonce: string;
  ttlMs?: number;
}): DecisionClaims {
  const ttlMs = input.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_APPROVAL_TTL_MS) {
    throw new RetrysafeError('InvalidIntent', `ttl must be between 1 ms and ${MAX_APPROVAL_TTL_MS} ms, got ${ttlMs}`, {
      field: 'ttl',
    });
  }
  return {
    decision: input.decision,
    key: input.key,
    tenant: input.tenant,
    ...(input.requestHash !== undefined ? { requestHash: input.requestHash } : {}),
    ...(input.params !== undefined ? { params: input.params } : {}),
    operator: input.operator,
    issuedAt: new Date(input.nowMs).toISOString(),
    expiresAt: new Date(input.nowMs + ttlMs).toISOString(),
    nonce: input.nonce,
  };
}

/** Validates the trusted key table (from configuration); throws `InvalidIntent` naming the key id. */
export function parseTrustedApprovalKeys(raw: unknown): TrustedApprovalKeys {
  const parsed = decisionSchemas().TrustedApprovalKeys.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `trusted approval keys: ${field}: ${message}`, { field });
  }
  return parsed.data;
}

/** The verified decision's parameters, checked against its kind; `DecisionRejected` (malformed) names the field. */
export function decisionParams<D extends Decision>(claims: DecisionClaims & { decision: D }): DecisionParams<D> {
  const parsed = decisionSchemas().DECISION_PARAMS[claims.decision].safeParse(claims.params ?? {});
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, ['params']);
    throw new RetrysafeError('DecisionRejected', `the ${claims.decision} decision is malformed: ${field}: ${message}`, {
      reason: 'malformed',
      field,
    });
  }
  return parsed.data as DecisionParams<D>;
}
