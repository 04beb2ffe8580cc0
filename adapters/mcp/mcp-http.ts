import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { listenHttp } from '../../workers/http-listener';
import { agentForToken, type Agent } from './agent-tokens';
import { originPolicy, originProblem } from './request-origin';

/** The largest request body accepted: a tool call is an intent (32 KB at most) and its envelope. */
const MAX_BODY_BYTES = 256 * 1024;

/** Where and for whom the MCP Streamable HTTP server listens, and which Host and Origin headers it accepts. */
export interface McpHttpOptions {
  host: string;
  port: number;
  /** The agents and their tenants; re-read by the caller when it changes. */
  agents: () => Promise<readonly Agent[]> | readonly Agent[];
  /** A server for one authenticated agent's request. */
  serverFor(agent: Agent): Server;
  /**
   * `host:port` names the Host header may carry. Default: the loopback names with the port; a server bound beyond
   * loopback must list the names its clients use, or it does not start.
   */
  allowedHosts?: readonly string[];
  /** Origins a browser page may call from (an Origin header not listed gets 403). Default: the loopback origins. */
  allowedOrigins?: readonly string[];
  /** Where request failures are written (one line each); nothing is logged without it. */
  log?: (line: string) => void;
}

/** A running MCP HTTP server: its endpoint URL (`http://host:port/mcp`) and how to stop it. */
export interface McpHttpServer {
  url: string;
  /** Stops accepting requests and closes the listening socket. */
  close(): Promise<void>;
}

type McpEnv = { Variables: { agent: Agent } };

/**
 * Streamable HTTP at `/mcp`, on Hono with the MCP SDK's Web-standard transport, stateless (a fresh MCP server and
 * transport per request, so any instance can answer any call): a request for another host name (421) or from a
 * page of another origin (403) is refused first, against DNS rebinding; one without a known agent's bearer token
 * gets 401 before the MCP layer sees it; and the agent's tenant, never an argument, decides whose actions a call
 * claims.
 */
export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  // Checked before listening, so a server bound beyond loopback without its names never starts; the loopback
  // names get their port once it is known (set before the first request can arrive).
  let policy = originPolicy({ host: opts.host, port: opts.port }, opts);
  const app = new Hono<McpEnv>();
  app.use('*', async (c, next) => {
    const refused = originProblem({ host: c.req.header('host'), origin: c.req.header('origin') }, policy);
    if (refused) return jsonRpcError(c, refused.status, -32000, refused.message);
    await next();
  });
  app.all('/mcp', knownAgent(opts), async (c, next) => {
    if (c.req.method === 'POST') return next();
    c.header('Allow', 'POST');
    return jsonRpcError(c, 405, -32000, 'this server is stateless: POST JSON-RPC requests to /mcp');
  });
  app.post(
    '/mcp',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => jsonRpcError(c, 413, -32600, `request body over ${MAX_BODY_BYTES} bytes`),
    }),
    async (c) => {
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch {
        return jsonRpcError(c, 400, -32700, 'the request body is not JSON');
      }
      const server = opts.serverFor(c.var.agent);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(c.req.raw, { parsedBody: body });
      } finally {
        // JSON responses are complete when handleRequest returns: the per-request server is done.
        void transport.close();
        void server.close();
      }
    },
  );
  app.notFound((c) => jsonRpcError(c, 404, -32601, `no MCP endpoint at ${c.req.path}; use /mcp`));
  app.onError((err, c) => {
    opts.log?.(`mcp http: ${err.stack ?? String(err)}`);
    return jsonRpcError(c, 500, -32603, 'internal error');
  });
  const listener = await listenHttp(app, { port: opts.port, host: opts.host });
  policy = originPolicy({ host: opts.host, port: listener.port }, opts);
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${listener.port}/mcp`,
    close: listener.close,
  };
}

/** 401 unless the bearer token is a known agent's; the agent is then `c.var.agent`. */
function knownAgent(opts: McpHttpOptions): MiddlewareHandler<McpEnv> {
  return async (c, next) => {
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const agent = agentForToken(await opts.agents(), token);
    if (!agent) {
      c.header('WWW-Authenticate', 'Bearer realm="retrysafe-mcp"');
      return jsonRpcError(c, 401, -32001, token ? 'unknown agent token' : 'a bearer token is required');
    }
    c.set('agent', agent);
    await next();
  };
}

function jsonRpcError(c: Context, status: number, code: number, message: string) {
  return c.json({ jsonrpc: '2.0', error: { code, message }, id: null }, status as 400);
}
