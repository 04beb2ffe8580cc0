import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
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

/**
 * Streamable HTTP at `/mcp`, stateless (a fresh MCP server and transport per request, so any instance can
 * answer any call): a request for another host name (421) or from a page of another origin (403) is refused
 * first, against DNS rebinding; one without a known agent's bearer token gets 401 before the MCP layer sees it;
 * and the agent's tenant, never an argument, decides whose actions a call claims.
 */
export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  // Checked before listening, so a server bound beyond loopback without its names never starts; the loopback
  // names get their port once it is known (set before the first request can arrive).
  let policy = originPolicy({ host: opts.host, port: opts.port }, opts);
  const httpServer = http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      opts.log?.(`mcp http: ${(err as Error).stack ?? String(err)}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'internal error');
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const refused = originProblem(req, policy);
    if (refused) return sendJsonRpcError(res, refused.status, -32000, refused.message);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp')
      return sendJsonRpcError(res, 404, -32601, `no MCP endpoint at ${url.pathname}; use /mcp`);
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    const agent = agentForToken(await opts.agents(), token);
    if (!agent) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="retrysafe-mcp"');
      return sendJsonRpcError(res, 401, -32001, token ? 'unknown agent token' : 'a bearer token is required');
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendJsonRpcError(res, 405, -32000, 'this server is stateless: POST JSON-RPC requests to /mcp');
    }
    const body = await readJson(req);
    if (body === TOO_LARGE) return sendJsonRpcError(res, 413, -32600, `request body over ${MAX_BODY_BYTES} bytes`);
    if (body === NOT_JSON) return sendJsonRpcError(res, 400, -32700, 'the request body is not JSON');
    const server = opts.serverFor(agent);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  policy = originPolicy({ host: opts.host, port }, opts);
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      }),
  };
}

const TOO_LARGE = Symbol('too large');
const NOT_JSON = Symbol('not JSON');

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return TOO_LARGE;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

function sendJsonRpcError(res: http.ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
