/**
 * Who may resolve actions. Operators are listed in a JSON file holding only SHA-256 digests of their
 * tokens, so the file can be read by the CLI's host without exposing a usable secret. The name that
 * goes into an action's audit trail comes from this file, never from a flag: an operator cannot sign
 * a decision with someone else's name.
 *
 * The format is policies/operators.ts's, shared with the approval service and workers.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EXIT, OpsError, UnauthorizedError } from './errors';
import { OperatorName, parseOperators, type Operator } from '../../policies/operators';
import type { OperatorScope } from '../../policies/signed-decision';
import { readOperatorsFile as readSharedOperatorsFile } from '../../workers/operators-file';
import { tokenSha256 as hashToken, findByToken as findOperator } from '../../workers/bearer-tokens';

export const DEFAULT_OPERATORS_FILE = '.retrysafe/operators.json';
export const OPERATOR_TOKEN_ENV = 'RETRYSAFE_OPERATOR_TOKEN';
export const OPERATORS_FILE_ENV = 'RETRYSAFE_OPERATORS_FILE';

export { OperatorName };
export type OperatorEntry = Operator;
export type OperatorsFile = { operators: Operator[] };

export function operatorsFilePath(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  return path.resolve(cwd, env[OPERATORS_FILE_ENV] || DEFAULT_OPERATORS_FILE);
}

/** Operators' tokens are held as digests (workers/bearer-tokens.ts), as MCP agents' are. */
export { hashToken, findOperator };

/** Reads and validates the operators file (the format every tool shares); undefined when it does not exist. */
export async function readOperatorsFile(file: string): Promise<OperatorsFile | undefined> {
  try {
    const operators = await readSharedOperatorsFile(file);
    return operators && { operators };
  } catch (err) {
    throw new OpsError(`the operators file ${(err as Error).message}`, EXIT.failed);
  }
}

/**
 * Authenticates the operator behind a token (from --operator-token, else RETRYSAFE_OPERATOR_TOKEN).
 * Throws UnauthorizedError (exit 3) when the token is missing or unknown; the caller sends nothing then.
 */
export async function authenticateOperator(
  env: NodeJS.ProcessEnv,
  tokenFlag: string | undefined,
): Promise<OperatorEntry> {
  const token = await operatorToken(env, tokenFlag);
  if (!token) {
    throw new UnauthorizedError(`an operator token is required: set ${OPERATOR_TOKEN_ENV} or pass --operator-token`);
  }
  const file = operatorsFilePath(env);
  const operators = await readOperatorsFile(file);
  if (!operators) {
    throw new UnauthorizedError(`no operators file at ${file}; create one with \`retrysafe ops operators add NAME\``);
  }
  const operator = findOperator(operators.operators, token);
  if (!operator) throw new UnauthorizedError(`the operator token is not listed in ${file}`);
  return operator;
}

/**
 * The local operator's token, which a local stack (`retrysafe dev`) keeps beside the operators file it creates
 * (mode 0600), so that `ops approve KEY` works in a fresh project with nothing to export. Only ever a fallback.
 */
export function demoTokenFile(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  return path.join(path.dirname(operatorsFilePath(env, cwd)), DEMO_TOKEN_FILE_NAME);
}
export const DEMO_TOKEN_FILE_NAME = 'demo-operator.token';

/**
 * The operator token to use: --operator-token, else RETRYSAFE_OPERATOR_TOKEN, else the demo operator's
 * token file next to the operators file (when a local stack made one); undefined when there is none.
 */
export async function operatorToken(
  env: NodeJS.ProcessEnv,
  tokenFlag: string | undefined,
): Promise<string | undefined> {
  return (await operatorTokenAndSource(env, tokenFlag))?.token;
}

/** The token and where it came from: only the demo operator's may be sent to the default approval URL. */
export async function operatorTokenAndSource(
  env: NodeJS.ProcessEnv,
  tokenFlag: string | undefined,
): Promise<{ token: string; source: 'flag' | 'env' | 'demo' } | undefined> {
  if (tokenFlag !== undefined) return { token: tokenFlag, source: 'flag' };
  const fromEnv = env[OPERATOR_TOKEN_ENV];
  if (fromEnv !== undefined) return { token: fromEnv, source: 'env' };
  try {
    const token = (await readFile(demoTokenFile(env), 'utf8')).trim();
    return token ? { token, source: 'demo' } : undefined;
  } catch {
    return undefined;
  }
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
  const existing = current.operators.find((op) => op.name === name);
  const base = existing ? { tenants: existing.tenants, roles: existing.roles } : DEFAULT_NEW_OPERATOR_SCOPE;
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
      ? current.operators.map((op) => (op.name === name ? entry : op))
      : [...current.operators, entry],
  };
  // What is written must read back in every tool: check it with the shared parser first.
  parseOperators(next);
  await mkdir(path.dirname(file), { recursive: true });
  // Write-then-rename so a crash never leaves a half-written file that locks every operator out.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return { token, replaced };
}
