/**
 * A small chat provider for the bring-your-own-tool test, run as its own process so that killing a
 * worker does not kill it. Like Slack it answers 200 for a new message and knows no idempotency key;
 * messages carry the client's reference and can be listed by it, but the list lags `--lag-ms` behind
 * writes. The admin routes count what really happened, without the lag.
 *   POST /messages {channel, text, clientRef}  → 200 {ts}     (channel "closed" → 404 channel_not_found)
 *   GET  /messages?clientRef=R                 → {messages: [...]} visible only after the lag
 *   GET  /admin/stats                          → {posts, messages, emptyLookups, lookups}
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, 'lag-ms': { type: 'string', default: '0' } },
});
const lagMs = Number(values['lag-ms']);
const messages: Array<{ ts: string; channel: string; text: string; clientRef: string; at: number }> = [];
const stats = { posts: 0, lookups: 0, emptyLookups: 0 };

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && url.pathname === '/admin/stats')
    return send(200, { ...stats, messages: messages.length, byRef: countByRef() });
  if (req.method === 'GET' && url.pathname === '/messages') {
    stats.lookups++;
    const ref = url.searchParams.get('clientRef') ?? '';
    const visible = messages.filter((m) => m.clientRef === ref && Date.now() - m.at >= lagMs);
    if (visible.length === 0) stats.emptyLookups++;
    return send(200, { ok: true, messages: visible });
  }
  if (req.method === 'POST' && url.pathname === '/messages') {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      stats.posts++;
      const body = JSON.parse(raw || '{}') as { channel?: string; text?: string; clientRef?: string };
      if (body.channel === 'closed') return send(404, { ok: false, error: 'channel_not_found' });
      const message = {
        ts: `${Date.now()}.${String(messages.length).padStart(6, '0')}`,
        channel: String(body.channel),
        text: String(body.text),
        clientRef: String(body.clientRef),
        at: Date.now(),
      };
      messages.push(message);
      send(200, { ok: true, ts: message.ts });
    });
    return;
  }
  send(404, { ok: false, error: 'unknown_method' });
});

function countByRef(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of messages) out[m.clientRef] = (out[m.clientRef] ?? 0) + 1;
  return out;
}

server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ event: 'chat-ready', url: `http://127.0.0.1:${port}` })}\n`);
});
