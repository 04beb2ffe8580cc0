/**
 * `retrysafe/mcp`: registered tools as an MCP server (stdio, or Streamable HTTP with tenant-scoped agent tokens and
 * Host/Origin checks), and a remote MCP server's tool as a retrysafe provider. `@modelcontextprotocol/sdk` is the
 * application's dependency: an optional peer dependency of this package. `retrysafe mcp` runs the server.
 *
 * @packageDocumentation
 */
export { createRetrysafeMcpServer, MCP_SERVER_INFO } from '../adapters/mcp/mcp-server';
export { startMcpHttp } from '../adapters/mcp/mcp-http';
export type { McpHttpOptions, McpHttpServer } from '../adapters/mcp/mcp-http';
export { callRetrysafeTool, EVENT_ARGUMENT, mcpToolListings, STEP_ARGUMENT } from '../adapters/mcp/mcp-tools';
export type { McpCallDeps, McpToolListing, McpToolResult } from '../adapters/mcp/mcp-tools';
export { mcpProviderTool } from '../adapters/mcp/mcp-provider-tool';
export type { McpProviderToolConfig } from '../adapters/mcp/mcp-provider-tool';
export { AgentEntry, agentForToken, AgentsFile, newAgentToken, readAgentsFile } from '../adapters/mcp/agent-tokens';
export type { Agent } from '../adapters/mcp/agent-tokens';
export { originPolicy, originProblem } from '../adapters/mcp/request-origin';
export type { OriginPolicy } from '../adapters/mcp/request-origin';
