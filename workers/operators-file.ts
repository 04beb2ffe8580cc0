import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { OperatorScope, type OperatorScopes } from '../policies/signed-decision';
import { firstIssue } from '../policies/zod-issues';
import { ConfigError } from './config';

/**
 * The scopes a worker trusts, read from the operators file the approval service and the ops CLI share:
 * each entry's name, tenants and roles. The token digests in it are the service's business, not the
 * worker's, and are ignored here. An entry without tenants or roles may decide nothing.
 */
const Entry = z.looseObject({
  name: z.string().min(1).max(100),
  tenants: OperatorScope.shape.tenants.default([]),
  roles: OperatorScope.shape.roles.default([]),
});
const File = z.looseObject({ operators: z.array(Entry) });

export async function loadOperatorScopes(path: string): Promise<OperatorScopes> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the operators file: ${(err as Error).message}`);
  }
  const parsed = File.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new ConfigError(`${path}: ${field}: ${message}`);
  }
  return Object.fromEntries(parsed.data.operators.map((o) => [o.name, { tenants: o.tenants, roles: o.roles }]));
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
      throw new ConfigError(`${path}: cannot read the operators file: ${(err as Error).message}`);
    }
    if (cached?.stamp !== stamp) cached = { stamp, scopes: await loadOperatorScopes(path) };
    return cached.scopes;
  };
}
