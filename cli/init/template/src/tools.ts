import { z } from 'zod';
import { absent, defineTool, found, outcomeOfError, outcomeOfResponse, providerRequest } from 'retrysafe';

// The chat provider: the fake one the worker starts (src/fake-chat.ts) until CHAT_URL names a real one.
const baseUrl = () => process.env.CHAT_URL ?? 'http://127.0.0.1:4000';

export const postMessage = defineTool({
  name: 'post-message',
  input: z.strictObject({ channel: z.string().min(1), text: z.string().min(1) }),
  dedupe: 'lookup',
  readAfterWriteLagMs: 2_000,
  riskClass: 'routine-message',
  async execute(input, ctx) {
    const body = { ...input, clientRef: ctx.key };
    const sent = providerRequest({ baseUrl: baseUrl(), method: 'POST', path: '/messages', body, signal: ctx.signal });
    return sent.then((res) => outcomeOfResponse(res, (b) => (b as { ts?: string }).ts)).catch(outcomeOfError);
  },
  async lookup(_input, ctx) {
    const path = `/messages?clientRef=${encodeURIComponent(ctx.key)}`;
    const res = await providerRequest({ baseUrl: baseUrl(), method: 'GET', path, signal: ctx.signal });
    const [message] = (res.body as { messages: Array<{ ts: string }> }).messages;
    return message ? found(message.ts) : absent();
  },
});

export const tools = [postMessage];
