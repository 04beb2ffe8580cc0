import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 (port 0) that speaks enough of the chat-completions protocol for the
 * planner adapter: it answers from a script, one response per request, and records every request. When
 * the script runs out it answers 400, so a test that asks once too often fails instead of hanging on
 * retries.
 */
export type FakeResponse =
  /** A tool call; `arguments` may be an object (encoded for you) or raw text (to send malformed JSON). */
  | {
      toolCall: { name: string; arguments: string | Record<string, unknown> };
      content?: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
    }
  /** A text-only answer. */
  | { content: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** An HTTP error in the OpenAI error shape. */
  | { status: number; error: string }
  /** Exactly this body and status, e.g. a 200 that is not JSON. */
  | { rawBody: string; status?: number }
  /** Hold the reply, to exercise client timeouts. */
  | { delayMs: number; then: FakeResponse };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeOpenAiServer {
  /** The API root to configure, e.g. `http://127.0.0.1:43123/v1`. */
  url: string;
  calls(): number;
  requests(): RecordedRequest[];
  lastRequest(): RecordedRequest | undefined;
  /** Appends responses to the script. */
  script(responses: FakeResponse[]): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { prompt_tokens: 11, completion_tokens: 7 };

export async function start(): Promise<FakeOpenAiServer> {
  const queue: FakeResponse[] = [];
  const recorded: RecordedRequest[] = [];
  let completionId = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text: a test may assert on it
      }
      recorded.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        return send(res, 404, {
          error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' },
        });
      }
      const next = queue.shift();
      if (!next) {
        return send(res, 400, {
          error: {
            message: `fake-openai-server: script exhausted at request ${recorded.length}`,
            type: 'invalid_request_error',
          },
        });
      }
      respond(res, next, body);
    });
  });

  function respond(res: ServerResponse, r: FakeResponse, body: unknown): void {
    if ('delayMs' in r) {
      setTimeout(() => respond(res, r.then, body), r.delayMs);
      return;
    }
    if ('rawBody' in r) {
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json' });
      res.end(r.rawBody);
      return;
    }
    if ('error' in r) return send(res, r.status, { error: { message: r.error, type: 'fake_error' } });
    const model = (body as { model?: unknown } | undefined)?.model ?? 'unknown';
    const message =
      'toolCall' in r
        ? {
            role: 'assistant',
            content: r.content ?? null,
            tool_calls: [
              {
                id: `call_${completionId + 1}`,
                type: 'function',
                function: {
                  name: r.toolCall.name,
                  arguments:
                    typeof r.toolCall.arguments === 'string'
                      ? r.toolCall.arguments
                      : JSON.stringify(r.toolCall.arguments),
                },
              },
            ],
          }
        : { role: 'assistant', content: r.content };
    const usage = r.usage ?? DEFAULT_USAGE;
    send(res, 200, {
      id: `chatcmpl-fake-${++completionId}`,
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message, finish_reason: 'toolCall' in r ? 'tool_calls' : 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls: () => recorded.length,
    requests: () => [...recorded],
    lastRequest: () => recorded[recorded.length - 1],
    script: (responses) => void queue.push(...responses),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
