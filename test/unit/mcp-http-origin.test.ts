import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { newAgentToken, tokenSha256, type Agent } from '../../adapters/mcp/agent-tokens';
import { startMcpHttp, type McpHttpServer } from '../../adapters/mcp/mcp-http';

/**
 * The MCP server over HTTP answers only to the names it is known by and only to pages of allowed origins, before
 * it looks at the token: a valid token sent by a page on another site through a rebound name is refused.
 */
const token = newAgentToken();
const agents: Agent[] = [
  { name: 'bot', tenant: 'acme', tokenSha256: tokenSha256(token), addedAt: '2026-12-01T00:00:00.000Z' },
];
const serverFor = () => new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

/** A POST with the Host and Origin headers given (fetch cannot set Host). */
function post(port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(initialize);
  });
}

describe('the MCP HTTP server checks Host and Origin', () => {
  let server: McpHttpServer;
  let port: number;
  before(async () => {
    server = await startMcpHttp({ host: '127.0.0.1', port: 0, agents: () => agents, serverFor });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server?.close();
  });

  it('serves a loopback Host with the right token, with or without a loopback Origin', async () => {
    assert.equal((await post(port, { host: `127.0.0.1:${port}` })).status, 200);
    assert.equal((await post(port, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status, 200);
  });

  it('refuses another host name with 421, even with a valid token', async () => {
    const answer = await post(port, { host: `evil.example:${port}` });
    assert.equal(answer.status, 421);
    assert.match(answer.body, /does not answer to the host evil\.example/);
    assert.equal((await post(port, { host: `127.0.0.1:${port + 1}` })).status, 421, 'another port is another name');
  });

  it('refuses a page of a foreign origin with 403, even with a valid token', async () => {
    const answer = await post(port, { host: `127.0.0.1:${port}`, origin: 'https://evil.example' });
    assert.equal(answer.status, 403);
    assert.match(answer.body, /pages of https:\/\/evil\.example are not allowed/);
  });

  it('answers to configured names only, and does not start beyond loopback without them', async () => {
    const named = await startMcpHttp({
      host: '127.0.0.1',
      port: 0,
      agents: () => agents,
      serverFor,
      allowedHosts: ['mcp.internal:8443'],
      allowedOrigins: ['https://console.internal'],
    });
    try {
      const p = Number(new URL(named.url).port);
      assert.equal((await post(p, { host: 'mcp.internal:8443', origin: 'https://console.internal' })).status, 200);
      assert.equal((await post(p, { host: `127.0.0.1:${p}` })).status, 421);
    } finally {
      await named.close();
    }
    await assert.rejects(
      startMcpHttp({ host: '0.0.0.0', port: 0, agents: () => agents, serverFor }),
      /beyond loopback: name the hosts clients reach it by/,
    );
  });
});
