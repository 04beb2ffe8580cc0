import { z } from 'zod';
import { mcpProviderTool } from 'retrysafe/mcp';

/**
 * Two tools over the remote ticket desk's MCP tools, as an operator declares them: one for a desk that honours
 * the key and can be asked (`find_ticket`), one that declares neither, as for a desk that ignores keys, and a
 * wrong one that believes that desk's annotations.
 */
export function mcpDeskTools(urls: { keyed: string; keyless: string }) {
  const input = z.strictObject({ title: z.string().trim().min(1).max(200) });
  const ticketAt = (url: string) =>
    ({
      input,
      server: { url: `${url}/mcp` },
      call: 'create_ticket',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      summarize: (i: z.output<typeof input>) => `ticket: ${i.title}`,
      providerRef: (r: Record<string, unknown>) => (typeof r.id === 'string' ? r.id : undefined),
    }) as const;
  return [
    mcpProviderTool({
      ...ticketAt(urls.keyed),
      name: 'desk-ticket',
      version: 1,
      description: 'Open a ticket at the MCP ticket desk.',
      keyArgument: 'requestKey',
      dedupe: 'idempotency-key',
      lookup: {
        call: 'find_ticket',
        args: (_i, key) => ({ requestKey: key }),
        found: (r) => (r.found === true && typeof r.id === 'string' ? r.id : undefined),
      },
    }),
    mcpProviderTool({
      ...ticketAt(urls.keyless),
      name: 'keyless-ticket',
      version: 1,
      description: 'Open a ticket at a desk that ignores request keys and cannot be asked.',
      dedupe: 'none',
    }),
    // A wrong declaration, taken from the server's idempotentHint: the desk says so, and ignores the key.
    mcpProviderTool({
      ...ticketAt(urls.keyless),
      name: 'trusting-ticket',
      version: 1,
      description: 'Open a ticket, trusting the desk’s own hint that it honours keys.',
      keyArgument: 'requestKey',
      dedupe: 'idempotency-key',
    }),
  ];
}
