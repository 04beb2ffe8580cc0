import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { outcomeOfError } from '../../transport/http';
import type { DedupeCapability, Json, RiskClass, ToolContext, ToolDefinition } from '../../policies/tool';
import type { LookupAnswer, ToolOutcome } from '../../policies/tool-outcome';
import { VERSION } from '../../client/package-version';

/**
 * A tool of a remote MCP server, used as a retrysafe provider: any MCP tool then gets an action key, the
 * `unknown` state, reconciliation and review. What the server promises is declared here by the operator, never
 * read from the server's annotations, which are hints from the other side: `dedupe` says whether the server
 * honours the key argument (`idempotency-key`), can only be asked afterwards (`lookup`, through another of its
 * tools), or neither (`none`: a lost reply goes to a person).
 */
export interface McpProviderToolConfig<Name extends string, S extends z.ZodType> {
  name: Name;
  version: number;
  description: string;
  input: S;
  /** The MCP server's Streamable HTTP endpoint, and headers (a bearer token) for it. */
  server: { url: string; headers?: Record<string, string> };
  /** The server's tool that performs the effect. */
  call: string;
  /** The argument the action key is sent in, when the server takes one (required for `idempotency-key`). */
  keyArgument?: string;
  dedupe: DedupeCapability;
  readAfterWriteLagMs: number;
  keyRetentionMs?: number;
  riskClass: RiskClass;
  /** The one-line summary operators see in the Web UI and the review queue. */
  summarize(input: z.output<S>): string;
  /** The effect's ID in the call's result (its structured content); undefined when the result names none. */
  providerRef(result: Record<string, unknown>): string | undefined;
  /** Another of the server's tools that finds an earlier effect; required for `lookup`. */
  lookup?: {
    call: string;
    /** The lookup call's arguments for an action's input and key. */
    args(input: z.output<S>, key: string): Record<string, unknown>;
    /** The effect's ID when the lookup's result shows one, undefined when it shows none. */
    found(result: Record<string, unknown>): string | undefined;
  };
  /**
   * The reason, when an error result of `call` is one the server gives before doing anything (a validation
   * refusal); undefined otherwise. Without it every error result is ambiguous: an MCP server answers an exception
   * thrown after the effect with an error result just the same.
   */
  refused?(result: { text: string; structured: Record<string, unknown> }): string | undefined;
  /** Milliseconds one call may take before its outcome counts as unknown; 10 s by default. */
  timeoutMs?: number;
}

/**
 * A retrysafe tool whose effect is a call of a remote MCP server's tool, with the contract the operator declares in
 * `config`. Throws when the contract is incomplete (a key argument for `idempotency-key`, a lookup for `lookup`).
 */
export function mcpProviderTool<const Name extends string, S extends z.ZodType>(
  config: McpProviderToolConfig<Name, S>,
): ToolDefinition<Name, S> {
  if (config.dedupe === 'idempotency-key' && !config.keyArgument) {
    throw new Error(`tool ${config.name}: dedupe idempotency-key needs keyArgument, the argument the key is sent in`);
  }
  if (config.dedupe === 'lookup' && !config.lookup) {
    throw new Error(`tool ${config.name}: dedupe lookup needs lookup, the server's tool that finds an earlier effect`);
  }
  const timeout = config.timeoutMs ?? 10_000;
  const what = `${config.name} (MCP tool ${config.call} at ${config.server.url})`;

  async function connected<T>(use: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ name: `retrysafe:${config.name}`, version: VERSION });
    const transport = new StreamableHTTPClientTransport(new URL(config.server.url), {
      requestInit: { headers: config.server.headers ?? {} },
    });
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    try {
      return await use(client);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  async function execute(input: z.output<S>, ctx: ToolContext): Promise<ToolOutcome> {
    const args = {
      ...(input as Record<string, unknown>),
      ...(config.keyArgument ? { [config.keyArgument]: ctx.key } : {}),
    };
    let client: Client | undefined;
    try {
      // Until the handshake is done, nothing of the call has been sent.
      return await connected(async (c) => {
        client = c;
        const result = await c.callTool({ name: config.call, arguments: args }, undefined, { timeout });
        const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
        const text = textOf(result.content);
        if (result.isError) {
          const refusal = config.refused?.({ text, structured });
          if (refusal) return { outcome: 'rejected', reason: 'invalid', message: `${what} refused: ${refusal}` };
          // It may have failed after doing the work: the key, a lookup or a person settles it.
          return { outcome: 'ambiguous', message: `${what} answered an error: ${text || 'no detail'}` };
        }
        const ref = config.providerRef(structured);
        if (!ref) return { outcome: 'ambiguous', message: `${what} answered without naming the effect: ${text}` };
        return { outcome: 'committed', providerRef: ref, result: structured as Json };
      });
    } catch (err) {
      if (!client) return { outcome: 'not-committed', reason: `${what}: could not connect: ${(err as Error).message}` };
      // No such tool: the server did nothing. Anything else after the handshake may have followed the effect.
      if (err instanceof McpError && err.code === ErrorCode.MethodNotFound) {
        return { outcome: 'rejected', reason: 'invalid', message: `${what}: ${err.message}` };
      }
      // Sent: a refused connection now means it never arrived; a broken one or no reply, that it may have happened.
      return outcomeOfError(err, what);
    }
  }

  const lookup = config.lookup;
  return {
    name: config.name,
    version: config.version,
    description: config.description,
    input: config.input,
    kind: 'mutation',
    dedupe: config.dedupe,
    readAfterWriteLagMs: config.readAfterWriteLagMs,
    ...(config.keyRetentionMs !== undefined ? { keyRetentionMs: config.keyRetentionMs } : {}),
    riskClass: config.riskClass,
    summarize: config.summarize,
    execute,
    ...(lookup
      ? {
          async lookup(input: z.output<S>, ctx: ToolContext): Promise<LookupAnswer> {
            // A lookup that cannot be asked throws: that proves nothing either way.
            return connected(async (c) => {
              const result = await c.callTool(
                { name: lookup.call, arguments: lookup.args(input, ctx.key) },
                undefined,
                {
                  timeout,
                },
              );
              if (result.isError)
                throw new Error(`${config.name}: lookup ${lookup.call} failed: ${textOf(result.content)}`);
              // An answer without structured content cannot say "absent": it proves nothing either way.
              if (!result.structuredContent) {
                throw new Error(`${config.name}: lookup ${lookup.call} answered without structured content`);
              }
              const structured = result.structuredContent as Record<string, unknown>;
              const ref = lookup.found(structured);
              return ref ? { found: true, providerRef: ref, result: structured as Json } : { found: false };
            });
          },
        }
      : {}),
  };
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter((c): c is { type: 'text'; text: string } => (c as { type?: string }).type === 'text')
    .map((c) => c.text)
    .join(' ')
    .slice(0, 500);
}
