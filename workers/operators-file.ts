import { readFile, stat } from 'node:fs/promises';
import { operatorScopesOf, parseOperators, type Operator } from '../policies/operators';
import type { OperatorScopes } from '../policies/signed-decision';
import { invalidConfigError } from '../policies/errors';

/**
 * Reading the operators file (policies/operators.ts has its format). The approval service, the ops CLI
 * and workers all read it through here, so a file one of them accepts, all of them accept.
 */

/** A problem with the operators file; the message starts with the file's path and names the field. */
export const OperatorsFileError = invalidConfigError('OperatorsFileError');

/** The file's operators, or undefined when it does not exist (any other problem throws, naming the file). */
export async function readOperatorsFile(path: string): Promise<Operator[] | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new OperatorsFileError(`${path}: cannot read the operators file: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new OperatorsFileError(`${path}: the operators file is not JSON: ${(err as Error).message}`);
  }
  try {
    return parseOperators(raw);
  } catch (err) {
    throw new OperatorsFileError(`${path}: ${(err as Error).message}`);
  }
}

/** The scopes a worker trusts: each entry's name, tenants and roles (the digests are the service's business). */
export async function loadOperatorScopes(path: string): Promise<OperatorScopes> {
  const operators = await readOperatorsFile(path);
  if (!operators) throw new OperatorsFileError(`${path}: cannot read the operators file: it does not exist`);
  return operatorScopesOf(operators);
}

/**
 * A reader for every policy load: the file is parsed again only when its modification time or size
 * changed, so an operator added or narrowed counts at once without a file read per action.
 */
export function operatorScopesReader(path: string): () => Promise<OperatorScopes> {
  let cached: { stamp: string; scopes: OperatorScopes } | undefined;
  return async () => {
    let stamp: string;
    try {
      const s = await stat(path);
      stamp = `${s.mtimeMs}:${s.size}`;
    } catch (err) {
      throw new OperatorsFileError(`${path}: cannot read the operators file: ${(err as Error).message}`);
    }
    if (cached?.stamp !== stamp) cached = { stamp, scopes: await loadOperatorScopes(path) };
    return cached.scopes;
  };
}
