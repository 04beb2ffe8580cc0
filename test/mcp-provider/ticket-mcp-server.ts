/**
 * A remote MCP server written with the official SDK (McpServer, Streamable HTTP, stateless): a ticket desk
 * whose `create_ticket` tool opens a ticket, honouring `requestKey` unless started with `--ignore-keys`, and,
 * unless started with `--no-find`, a `find_ticket` tool that finds one by its key. `GET /admin/tickets` lists
 * what it holds, so a test counts effects here. A title starting `fail-after-write` opens the ticket and then
 * throws, as a handler that fails after its effect does. Prints `{"url": …}` when it listens.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const ignoreKeys = process.argv.includes('--ignore-keys');
const withFind = !process.argv.includes('--no-find');
const tickets: { id: string; title: string; requestKey?: string }[] = [];

function desk(): McpServer {
  const server = new McpServer({ name: 'ticket-desk', version: '1.0.0' });
  server.registerTool(
    'create_ticket',
    {
      description: 'Open a ticket',
      inputSchema: { title: z.string(), requestKey: z.string().optional() },
      // What the server claims; retrysafe never takes these as the contract.
      annotations: { idempotentHint: true },
    },
    async ({ title, requestKey }) => {
      const earlier = !ignoreKeys && requestKey ? tickets.find((t) => t.requestKey === requestKey) : undefined;
      const ticket = earlier ?? { id: `tk_${tickets.length + 1}`, title, ...(requestKey ? { requestKey } : {}) };
      if (!earlier) {
        tickets.push(ticket);
        // A server whose handler fails after the write: the SDK answers the exception as an error result.
        if (title.startsWith('fail-after-write')) throw new Error('downstream timeout after the ticket was written');
      }
      return { content: [{ type: 'text', text: `ticket ${ticket.id}` }], structuredContent: { id: ticket.id } };
    },
  );
  if (withFind) {
    server.registerTool(
      'find_ticket',
      { description: 'Find a ticket by its request key', inputSchema: { requestKey: z.string() } },
      async ({ requestKey }) => {
        const found = tickets.find((t) => t.requestKey === requestKey);
        return {
          content: [{ type: 'text', text: found ? `ticket ${found.id}` : 'no ticket' }],
          structuredContent: found ? { found: true, id: found.id } : { found: false },
        };
      },
    );
  }
  return server;
}

const httpServer = http.createServer((req, res) => {
  void (async () => {
    if (req.url === '/admin/tickets') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(tickets));
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
    const server = desk();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  })().catch((err: unknown) => {
    process.stderr.write(`ticket desk: ${String(err)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  });
});
httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
