/**
 * Who may resolve actions. Operators are listed in a JSON file holding only SHA-256 digests of their
 * tokens, so the file can be read by the CLI's host without exposing a usable secret. The name that
 * goes into an action's audit trail comes from this file, never from a flag: an operator cannot sign
 * a decision with someone else's name.
 *
 *   { "operators": [{ "name": "alice", "tokenSha256": "<hex sha256 of the token>" }] }
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { EXIT, OpsError, UnauthorizedError } from './errors';
import type { OperatorScope } from '../../policies/signed-decision';
import { firstIssue } from '../../policies/zod-issues';

export const DEFAULT_OPERATORS_FILE = '.data/operators.json';
export const OPERATOR_TOKEN_ENV = 'RETRYSAFE_OPERATOR_TOKEN';
export const OPERATORS_FILE_ENV = 'RETRYSAFE_OPERATORS_FILE';

/** Names end up in audit entries and the Web UI; keep them plain. */
export const OperatorName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/,
    'must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
  );

export const OperatorEntry = z.looseObject({
  name: OperatorName,
  tokenSha256: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits (the SHA-256 of the token)')),
});
export type OperatorEntry = z.infer<typeof OperatorEntry>;

export const OperatorsFile = z.looseObject({ operators: z.array(OperatorEntry) }).superRefine((file, ctx) => {
  const seen = new Set<string>();
  file.operators.forEach((op, i) => {
    if (seen.has(op.name))
      ctx.addIssue({ code: 'custom', path: ['operators', i, 'name'], message: `${op.name} is listed twice` });
    seen.add(op.name);
  });
});
export type OperatorsFile = z.infer<typeof OperatorsFile>;

export function operatorsFilePath(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  return path.resolve(cwd, env[OPERATORS_FILE_ENV] || DEFAULT_OPERATORS_FILE);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The operator whose digest matches the token, or undefined. Every entry is compared in constant time
 * and the loop never stops early, so response time says nothing about which digest came close.
 */
export function findOperator(operators: readonly OperatorEntry[], token: string): OperatorEntry | undefined {
  const digest = Buffer.from(hashToken(token), 'hex');
  let match: OperatorEntry | undefined;
  for (const op of operators) {
    const candidate = Buffer.from(op.tokenSha256, 'hex');
    if (candidate.length === digest.length && timingSafeEqual(candidate, digest) && match === undefined) match = op;
  }
  return match;
}

/** Reads and validates the operators file; undefined when it does not exist. */
export async function readOperatorsFile(file: string): Promise<OperatorsFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new OpsError(`cannot read the operators file ${file}: ${(err as Error).message}`, EXIT.failed);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new OpsError(`the operators file ${file} is not JSON: ${(err as Error).message}`, EXIT.failed);
  }
  const parsed = OperatorsFile.safeParse(json);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw new OpsError(`the operators file ${file} is invalid at ${issue.field}: ${issue.message}`, EXIT.failed);
  }
  return parsed.data;
}

/**
 * Authenticates the operator behind a token (from --operator-token, else RETRYSAFE_OPERATOR_TOKEN).
 * Throws UnauthorizedError (exit 3) when the token is missing or unknown; the caller sends nothing then.
 */
export async function authenticateOperator(
  env: NodeJS.ProcessEnv,
  tokenFlag: string | undefined,
): Promise<OperatorEntry> {
  const token = tokenFlag ?? env[OPERATOR_TOKEN_ENV];
  if (!token) {
    throw new UnauthorizedError(`an operator token is required: set ${OPERATOR_TOKEN_ENV} or pass --operator-token`);
  }
  const file = operatorsFilePath(env);
  const operators = await readOperatorsFile(file);
  if (!operators) {
    throw new UnauthorizedError(`no operators file at ${file}; create one with \`npm run ops -- operators add NAME\``);
  }
  const operator = findOperator(operators.operators, token);
  if (!operator) throw new UnauthorizedError(`the operator token is not listed in ${file}`);
  return operator;
}

/**
 * What `operators add` grants unless told otherwise: every tenant, approving and resolving actions; not
 * admin (raising a run's ceilings, resuming, cancelling), which is given with --role admin.
 */
export const DEFAULT_NEW_OPERATOR_SCOPE: OperatorScope = { tenants: ['*'], roles: ['approver', 'resolver'] };

/** A fresh random token: 32 bytes, URL-safe, with a prefix that makes a leaked one easy to spot. */
export function newOperatorToken(): string {
  return `rso_${randomBytes(32).toString('base64url')}`;
}

/**
 * Adds an operator, or gives an existing one a new token (the old one stops working). Returns the
 * token, which is stored nowhere: the file keeps only its digest.
 */
export async function addOperator(
  file: string,
  name: string,
  now = new Date(),
  scope: Partial<OperatorScope> = {},
): Promise<{ token: string; replaced: boolean }> {
  const current = (await readOperatorsFile(file)) ?? { operators: [] };
  const token = newOperatorToken();
  // A new token for an existing operator keeps the scope it has unless `scope` changes it; a new operator
  // gets DEFAULT_NEW_OPERATOR_SCOPE for what `scope` leaves out.
  const existing = current.operators.find((op) => op.name === name) as
    (OperatorEntry & Partial<OperatorScope>) | undefined;
  const base = existing ? { tenants: existing.tenants ?? [], roles: existing.roles ?? [] } : DEFAULT_NEW_OPERATOR_SCOPE;
  const entry: OperatorEntry = {
    name,
    tokenSha256: hashToken(token),
    tenants: [...(scope.tenants ?? base.tenants)],
    roles: [...(scope.roles ?? base.roles)],
    addedAt: now.toISOString(),
  };
  const replaced = current.operators.some((op) => op.name === name);
  const next: OperatorsFile = {
    ...current,
    operators: replaced
      ? current.operators.map((op) => (op.name === name ? { ...op, ...entry } : op))
      : [...current.operators, entry],
  };
  await mkdir(path.dirname(file), { recursive: true });
  // Write-then-rename so a crash never leaves a half-written file that locks every operator out.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return { token, replaced };
}
