import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { allIssues } from '../../policies/zod-issues';
import { findByToken, tokenSha256 } from '../../workers/bearer-tokens';
import { invalidConfigError } from '../../policies/errors';

export { tokenSha256 };

/**
 * The agents allowed to call the MCP server over HTTP, each bound to one tenant: `{ "agents": [{ "name",
 * "tenant", "tokenSha256" }] }`. Only the token's SHA-256 is stored; the token itself is shown once when an agent
 * is added. An agent's token is not an operator's: it claims actions for its tenant and can decide nothing.
 */
/** One agent of the agents file: its name, its one tenant, and its token's SHA-256 (never the token). */
export const AgentEntry = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, . _ - (at most 64)'),
  tenant: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a tenant ID as action keys spell it'),
  tokenSha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits'),
  addedAt: z.string().optional(),
});
/** The agents file's schema: `{ "agents": [AgentEntry, …] }`. */
export const AgentsFile = z.strictObject({ agents: z.array(AgentEntry) });
/** An agent allowed to call the MCP server over HTTP. */
export type Agent = z.infer<typeof AgentEntry>;

/** The agents file cannot be read or does not match its schema; the message names the file and the field. */
export const AgentsFileError = invalidConfigError('AgentsFileError');

/**
 * Reads and validates the agents file (unique names); throws AgentsFileError naming the file and field when it cannot.
 */
export async function readAgentsFile(file: string): Promise<Agent[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new AgentsFileError(`agents file ${file}: ${(err as Error).message}`);
  }
  const parsed = AgentsFile.safeParse(raw);
  if (!parsed.success)
    throw new AgentsFileError(
      `agents file ${file}: ${allIssues(parsed.error)
        .map((i) => `${i.field}: ${i.message}`)
        .join('; ')}`,
    );
  const names = new Set<string>();
  for (const agent of parsed.data.agents) {
    if (names.has(agent.name)) throw new AgentsFileError(`agents file ${file}: agent ${agent.name} is listed twice`);
    names.add(agent.name);
  }
  return parsed.data.agents;
}

/** A new agent token: 32 random bytes, base64url. */
export function newAgentToken(): string {
  return `rsa_${randomBytes(32).toString('base64url')}`;
}

/** The agent a bearer token belongs to; undefined for none. */
export function agentForToken(agents: readonly Agent[], token: string | undefined): Agent | undefined {
  return token ? findByToken(agents, token) : undefined;
}
