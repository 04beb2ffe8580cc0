import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseActionKey, parseRunWorkflowId } from '../../policies/action-key';
import {
  DECISIONS,
  decisionSchemas,
  DEFAULT_APPROVAL_TTL_MS,
  MAX_APPROVAL_TTL_MS,
  ROLE_FOR,
  type Decision,
  decisionClaims,
  approvalKeyId,
  approvalPublicKey,
  signDecisionWith,
  type SignedDecision,
} from '../../policies/signed-decision';
import { RetrysafeError } from '../../policies/errors';
import { approveUpdate, type ApprovalOutcome } from '../../messages/approval';
import { typedRefusal, withTrustRefresh } from '../../client';
import { firstIssue } from '../../policies/zod-issues';
import { parseOperators, type Operator } from '../../policies/operators';
import { readOperatorsFile } from '../../workers/operators-file';
import { nativeEd25519Signer } from './native-signing';

/**
 * The approval service's core: who may approve (operators known by the SHA-256 of their bearer token)
 * and the one place the signing key is used. The approver in every signed claim is the operator the
 * token belongs to; a request cannot name someone else.
 */

export { Operator, operatorScopesOf } from '../../policies/operators';

/**
 * The body of a signing request. The operator is deliberately absent (it comes from the token), and so
 * is the tenant (it comes from the key: an action key or a run ID names its tenant).
 */
export const ApprovalRequest = z.strictObject({
  key: z.string({ error: 'must be a string' }),
  requestHash: z
    .string({ error: 'must be a string' })
    .regex(/^[0-9a-f]{64}$/, { error: 'must be the lower-case hex request hash shown in the dry run' })
    .optional(),
  decision: z.enum(DECISIONS, { error: `must be one of ${DECISIONS.join(', ')}` }),
  params: z.record(z.string(), z.unknown()).optional(),
  ttlSeconds: z
    .number({ error: `must be a whole number of seconds from 1 to ${MAX_APPROVAL_TTL_MS / 1000}` })
    .int({ error: `must be a whole number of seconds from 1 to ${MAX_APPROVAL_TTL_MS / 1000}` })
    .min(1, { error: `must be a whole number of seconds from 1 to ${MAX_APPROVAL_TTL_MS / 1000}` })
    .max(MAX_APPROVAL_TTL_MS / 1000, { error: `must be at most ${MAX_APPROVAL_TTL_MS / 1000} seconds` })
    .optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** Tokens longer than this are refused before hashing; real tokens are a few dozen characters. */
export const MAX_TOKEN_LENGTH = 1024;

/** SHA-256 (hex) of an operator token: what the operators file stores instead of the token. */
export function hashOperatorToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Validates an operators file's content for signing: the shared format (policies/operators.ts), with at
 * least one operator, since a service that can authenticate nobody is a configuration mistake.
 */
export function parseOperatorsFile(raw: unknown): Operator[] {
  const operators = parseOperators(raw);
  if (operators.length === 0) {
    throw new RetrysafeError('InvalidIntent', 'operators: must list at least one operator', { field: 'operators' });
  }
  return operators;
}

/** The tenant a decision's target belongs to: an action key's tenant segment, or a run ID's. */
export function tenantOfTarget(key: string): string {
  return key.startsWith('run:') ? parseRunWorkflowId(key).tenant : parseActionKey(key).tenant;
}

/** Reads and validates the operators file; errors start with the file's path. */
export async function loadOperatorsFile(path: string): Promise<Operator[]> {
  const operators = await readOperatorsFile(path);
  if (!operators) throw new Error(`${path}: cannot read the operators file: it does not exist`);
  try {
    return parseOperatorsFile({ operators });
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/** What the service reports of each decision it signed (for its log), never the signature itself. */
export interface SignedEvent {
  operator: string;
  key: string;
  decision: Decision;
  keyId: string;
  expiresAt: string;
}

export interface ApprovalSigner {
  readonly keyId: string;
  readonly publicKeyHex: string;
  /** The operators it signs for, with their scopes (operatorScopesOf gives what workers trust). */
  readonly operators: readonly Operator[];
  /** The operator whose token this is, or undefined. Takes the same time whichever operator (if any) matches. */
  authenticate(token: string | undefined): Operator | undefined;
  /** Signs the request as `operator`. Throws `InvalidIntent` naming the bad field of `request`. */
  sign(operator: Operator, request: unknown): SignedDecision;
}

export function createApprovalSigner(options: {
  privateKeyHex: string;
  /** Defaults to approvalKeyId(public key). */
  keyId?: string;
  operators: z.input<typeof Operator>[];
  /**
   * The operators file the list came from: read again whenever it changes, so an operator added, narrowed
   * or given a new token counts without a restart. A file that is deleted or turns invalid recognizes
   * nobody until it is fixed (`onReloadError` hears why).
   */
  operatorsFile?: string;
  onReloadError?: (message: string) => void;
  clock?: () => number;
  nonce?: () => string;
}): ApprovalSigner {
  // Checks the key first (InvalidIntent naming privateKeyHex), then imports it once.
  const signBytes = nativeEd25519Signer(options.privateKeyHex);
  const source = operatorsSource(options);
  const current = () => source.current().operators;
  const publicKeyHex = approvalPublicKey(options.privateKeyHex);
  const keyId = options.keyId ?? approvalKeyId(publicKeyHex);
  const clock = options.clock ?? Date.now;
  const nonce = options.nonce ?? (() => randomBytes(16).toString('hex'));

  return {
    keyId,
    publicKeyHex,
    get operators() {
      return current();
    },
    authenticate(token) {
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
      const { operators, digests } = source.current();
      const digest = createHash('sha256').update(token, 'utf8').digest();
      // Compare against every operator without stopping early, so timing does not reveal which one matched.
      let found = -1;
      digests.forEach((d, i) => {
        if (timingSafeEqual(d, digest)) found = i;
      });
      return found >= 0 ? operators[found] : undefined;
    },
    sign(operator, request) {
      if (!current().some((o) => o.name === operator.name && o.tokenSha256 === operator.tokenSha256)) {
        throw new RetrysafeError('DecisionRejected', 'only an authenticated operator can sign', { reason: 'unsigned' });
      }
      const body = parseApprovalRequest(request);
      const tenant = tenantOfTarget(body.key);
      // The workflow checks the scope again; refusing here tells the operator at once, before anything is sent.
      checkScope(
        current().find((o) => o.name === operator.name)!,
        body.decision,
        tenant,
      );
      const claims = decisionClaims({
        key: body.key,
        tenant,
        ...(body.requestHash !== undefined ? { requestHash: body.requestHash } : {}),
        ...(body.params !== undefined ? { params: body.params } : {}),
        operator: operator.name,
        decision: body.decision,
        nowMs: clock(),
        nonce: nonce(),
        ttlMs: body.ttlSeconds === undefined ? DEFAULT_APPROVAL_TTL_MS : body.ttlSeconds * 1000,
      });
      return signDecisionWith(claims, keyId, signBytes);
    },
  };
}

function fileStamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return 'missing';
  }
}

/** Validates a signing request; the error's `details.field` names the offending field. */
export function parseApprovalRequest(raw: unknown): ApprovalRequest {
  const fail = (field: string, message: string) =>
    new RetrysafeError('InvalidIntent', `${field}: ${message}`, { field });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail('(body)', 'must be a JSON object');
  if ('approver' in raw || 'operator' in raw) {
    throw fail(
      'approver' in raw ? 'approver' : 'operator',
      'not accepted; the operator is the one the token belongs to',
    );
  }
  if ('tenant' in raw) throw fail('tenant', "not accepted; the tenant is the key's");
  const parsed = ApprovalRequest.safeParse(raw);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw fail(issue.field === '(root)' ? '(body)' : issue.field, issue.message);
  }
  try {
    tenantOfTarget(parsed.data.key);
  } catch (err) {
    throw fail('key', (err as Error).message);
  }
  // The parameters are checked as the workflow will check them, so a malformed request is refused here.
  const params = decisionSchemas().DECISION_PARAMS[parsed.data.decision].safeParse(parsed.data.params ?? {});
  if (!params.success) {
    const issue = firstIssue(params.error, ['params']);
    throw fail(issue.field, issue.message);
  }
  const actionDecision = !parsed.data.key.startsWith('run:');
  if (actionDecision && parsed.data.requestHash === undefined) {
    throw fail('requestHash', 'is required for a decision on an action: the hash of the request you reviewed');
  }
  return parsed.data;
}

/**
 * Delivers a signed approval or rejection to its action's workflow (workflow ID = action key); a refusal
 * for a key or scope new to the action makes it re-read its trust first (client/index.ts
 * withTrustRefresh). Whatever the envelope says goes to the approve update, and the workflow refuses
 * what is not approve or reject. Refusals come back as the update's failure; `errorCodeOf(err) ===
 * 'DecisionRejected'` (policies/errors) identifies them.
 */
export async function submitApproval(client: Client, approval: SignedDecision): Promise<ApprovalOutcome> {
  parseActionKey(approval.claims.key);
  const handle = client.workflow.getHandle(approval.claims.key);
  try {
    return await withTrustRefresh(client, approval.claims.key, () =>
      handle.executeUpdate(approveUpdate, { args: [approval] }),
    );
  } catch (err) {
    throw typedRefusal(err);
  }
}

/**
 * The operators, from the list given or from the operators file, read again whenever its modification time or
 * size changed; with each one's token digest, for authentication.
 */
function operatorsSource(options: {
  operators: z.input<typeof Operator>[];
  operatorsFile?: string;
  onReloadError?: (message: string) => void;
}): { current(): { operators: Operator[]; digests: Buffer[] } } {
  let operators = parseOperatorsFile({ operators: options.operators });
  let digests = operators.map((op) => Buffer.from(op.tokenSha256, 'hex'));
  let stamp = options.operatorsFile ? fileStamp(options.operatorsFile) : undefined;
  return {
    current() {
      const file = options.operatorsFile;
      const now = file ? fileStamp(file) : undefined;
      if (!file || now === stamp) return { operators, digests };
      stamp = now;
      try {
        operators = parseOperatorsFile(JSON.parse(readFileSync(file, 'utf8')));
      } catch (err) {
        // Fail closed: a file deleted or broken (maybe to revoke someone) authenticates nobody until it is fixed.
        operators = [];
        options.onReloadError?.(`${file}: ${(err as Error).message}; no operator is recognized until it is fixed`);
      }
      digests = operators.map((op) => Buffer.from(op.tokenSha256, 'hex'));
      return { operators, digests };
    },
  };
}

/** Throws DecisionRejected when the operator lacks the role the decision needs or is not of the tenant. */
function checkScope(scope: Operator, decision: keyof typeof ROLE_FOR, tenant: string): void {
  const role = ROLE_FOR[decision];
  if (!scope.roles.includes(role)) {
    throw new RetrysafeError(
      'DecisionRejected',
      `operator ${scope.name} lacks the ${role} role that ${decision} needs`,
      {
        reason: 'missing-role',
        missing: `role:${role}`,
      },
    );
  }
  if (!scope.tenants.includes('*') && !scope.tenants.includes(tenant)) {
    throw new RetrysafeError('DecisionRejected', `operator ${scope.name} is not an operator of tenant ${tenant}`, {
      reason: 'missing-tenant',
      missing: `tenant:${tenant}`,
    });
  }
}
