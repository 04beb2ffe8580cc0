import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Message {
  ts: string;
  channel: string;
  text: string;
  clientRef?: string;
}

/**
 * A stand-in chat provider, so that the first action succeeds with nothing else running: POST /messages posts one,
 * GET /messages?clientRef=… finds it by the caller's reference (what the tool's lookup asks). It keeps messages in
 * memory, so a restart forgets them: point CHAT_URL at your real provider once you have one.
 */
export async function startFakeChat(port = 0): Promise<{ url: string; close: () => void }> {
  const messages: Message[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== '/messages') return reply(404, { error: 'not_found' });
    if (req.method === 'GET') {
      const ref = url.searchParams.get('clientRef');
      return reply(200, { messages: messages.filter((m) => ref === null || m.clientRef === ref) });
    }
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Partial<Message>;
      if (!body.channel || !body.text) return reply(400, { error: 'invalid_request', message: 'channel and text' });
      const message = {
        ts: `msg_${messages.length + 1}`,
        channel: body.channel,
        text: body.text,
        clientRef: body.clientRef,
      };
      messages.push(message);
      reply(201, message);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}
