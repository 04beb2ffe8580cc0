import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { callRetrysafeTool, mcpToolListings, type McpCallDeps } from './mcp-tools';
import { VERSION } from '../../client/package-version';

/** The MCP server's name and version, as `initialize` reports them. */
export const MCP_SERVER_INFO = { name: 'retrysafe', version: VERSION } as const;

const INSTRUCTIONS =
  'Each tool performs its side effect at most once per business event: pass the event it is for (eventId), and ' +
  'call again for the same event to learn the outcome. Results whose status is unknown, needs_review or ' +
  'awaiting_confirmation are not failures: a person or a reconciliation settles them, and you cannot approve.';

/**
 * An MCP server over retrysafe's registered tools, acting for one tenant (the server's, or the HTTP caller's
 * token's). The low-level server is used so that the tools' JSON Schemas are the registry's own (the ones the
 * planner sees), and every argument is validated by retrysafe, naming the field, not by a second schema.
 */
export function createRetrysafeMcpServer(deps: McpCallDeps): Server {
  const tools = mcpToolListings(deps.registry);
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callRetrysafeTool(deps, request.params.name, request.params.arguments ?? {}),
  );
  return server;
}
