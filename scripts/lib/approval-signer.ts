import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseActionKey } from '../../policies/action-key';
import {
  DEFAULT_APPROVAL_TTL_MS,
  MAX_APPROVAL_TTL_MS,
  approvalClaims,
  approvalKeyId,
  approvalPublicKey,
  signApproval,
  type SignedApproval,
} from '../../policies/approval';
import { RetrysafeError } from '../../policies/errors';
import { approveUpdate, type ApprovalOutcome } from '../../messages/approval';
import { firstIssue } from '../../policies/zod-issues';

/**
 * The approval service's core: who may approve (operators known by the SHA-256 of their bearer token)
 * and the one place the signing key is used. The approver in every signed claim is the operator the
 * token belongs to; a request cannot name someone else.
 */

const sha256Hex = z
  .string({ error: 'must be a string' })
  .regex(/^[0-9a-f]{64}$/, { error: 'must be the lower-case hex SHA-256 of the operator token' });

export const Operator = z.strictObject({
  name: z
    .string({ error: 'must be a string' })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/, { error: 'must be letters, digits, ".", "_", "@" or "-"' }),
  tokenSha256: sha256Hex,
});
export type Operator = z.infer<typeof Operator>;

export const OperatorsFile = z.strictObject({
  operators: z.array(Operator, { error: 'must be a list of { name, tokenSha256 }' }).min(1, {
    error: 'must list at least one operator',
  }),
});

/** The body of a signing request. The approver is deliberately absent: it comes from the token. */
export const ApprovalRequest = z.strictObject({
  key: z.string({ error: 'must be a string' }),
  requestHash: z
    .string({ error: 'must be a string' })
    .regex(/^[0-9a-f]{64}$/, { error: 'must be the lower-case hex request hash shown in the dry run' }),
  decision: z.enum(['approve', 'reject'], { error: 'must be "approve" or "reject"' }),
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

/** Validates an operators file's content; the error names the field (e.g. `operators.1.tokenSha256`). */
export function parseOperatorsFile(raw: unknown): Operator[] {
  const parsed = OperatorsFile.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `${field}: ${message}`, { field });
  }
  const { operators } = parsed.data;
  operators.forEach((op, i) => {
    if (operators.findIndex((o) => o.name === op.name) !== i) {
      throw new RetrysafeError('InvalidIntent', `operators.${i}.name: ${op.name} is listed twice`, {
        field: `operators.${i}.name`,
      });
    }
    if (operators.findIndex((o) => o.tokenSha256 === op.tokenSha256) !== i) {
      // One token for two names would make the approver ambiguous.
      throw new RetrysafeError('InvalidIntent', `operators.${i}.tokenSha256: the same token is already listed`, {
        field: `operators.${i}.tokenSha256`,
      });
    }
  });
  return operators;
}

/** Reads and validates the operators file; errors start with the file's path. */
export async function loadOperatorsFile(path: string): Promise<Operator[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`${path}: cannot read the operators file: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseOperatorsFile(raw);
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

export interface ApprovalSigner {
  readonly keyId: string;
  readonly publicKeyHex: string;
  /** The operator whose token this is, or undefined. Takes the same time whichever operator (if any) matches. */
  authenticate(token: string | undefined): Operator | undefined;
  /** Signs the request as `operator`. Throws `InvalidIntent` naming the bad field of `request`. */
  sign(operator: Operator, request: unknown): SignedApproval;
}

export function createApprovalSigner(options: {
  privateKeyHex: string;
  /** Defaults to approvalKeyId(public key). */
  keyId?: string;
  operators: Operator[];
  clock?: () => number;
  nonce?: () => string;
}): ApprovalSigner {
  if (!/^[0-9a-fA-F]{64}$/.test(options.privateKeyHex)) {
    throw new RetrysafeError('InvalidIntent', 'the approval signing key must be 32 bytes of hex', {
      field: 'privateKeyHex',
    });
  }
  const operators = parseOperatorsFile({ operators: options.operators });
  const digests = operators.map((op) => Buffer.from(op.tokenSha256, 'hex'));
  const publicKeyHex = approvalPublicKey(options.privateKeyHex);
  const keyId = options.keyId ?? approvalKeyId(publicKeyHex);
  const clock = options.clock ?? Date.now;
  const nonce = options.nonce ?? (() => randomBytes(16).toString('hex'));

  return {
    keyId,
    publicKeyHex,
    authenticate(token) {
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
      const digest = createHash('sha256').update(token, 'utf8').digest();
      // Compare against every operator without stopping early, so timing does not reveal which one matched.
      let found = -1;
      digests.forEach((d, i) => {
        if (timingSafeEqual(d, digest)) found = i;
      });
      return found >= 0 ? operators[found] : undefined;
    },
    sign(operator, request) {
      if (!operators.some((o) => o.name === operator.name && o.tokenSha256 === operator.tokenSha256)) {
        throw new RetrysafeError('ApprovalRejected', 'only an authenticated operator can sign', { reason: 'unsigned' });
      }
      const body = parseApprovalRequest(request);
      const claims = approvalClaims({
        key: body.key,
        requestHash: body.requestHash,
        approver: operator.name,
        decision: body.decision,
        nowMs: clock(),
        nonce: nonce(),
        ttlMs: body.ttlSeconds === undefined ? DEFAULT_APPROVAL_TTL_MS : body.ttlSeconds * 1000,
      });
      return signApproval(claims, options.privateKeyHex, keyId);
    },
  };
}

/** Validates a signing request; the error's `details.field` names the offending field. */
export function parseApprovalRequest(raw: unknown): ApprovalRequest {
  const fail = (field: string, message: string) =>
    new RetrysafeError('InvalidIntent', `${field}: ${message}`, { field });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail('(body)', 'must be a JSON object');
  if ('approver' in raw) throw fail('approver', 'not accepted; the approver is the operator the token belongs to');
  const parsed = ApprovalRequest.safeParse(raw);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw fail(issue.field === '(root)' ? '(body)' : issue.field, issue.message);
  }
  try {
    parseActionKey(parsed.data.key);
  } catch (err) {
    throw fail('key', (err as Error).message);
  }
  return parsed.data;
}

/**
 * Delivers a signed approval to its action's workflow (workflow ID = action key). Refusals come back as
 * the update's failure; `errorCodeOf(err) === 'ApprovalRejected'` (policies/errors) identifies them.
 */
export async function submitApproval(client: Client, approval: SignedApproval): Promise<ApprovalOutcome> {
  parseActionKey(approval.claims.key);
  return client.workflow.getHandle(approval.claims.key).executeUpdate(approveUpdate, { args: [approval] });
}
