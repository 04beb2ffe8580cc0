import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { z } from 'zod';
import { parseActionKey } from '../policies/action-key';
import { SA_KIND, SA_REFERENCE } from '../policies/search-attributes';
import { providerEventSignal, type ProviderEvent } from '../messages/action';
import { firstIssue } from '../policies/zod-issues';

/**
 * Provider webhooks and settlement events become evidence on the action they concern. An event names
 * its action by our key (sent as Idempotency-Key, or as the reference on key-less providers) or by the
 * business reference the provider knows (shipment or ticket reference), which every action records in
 * the RetrysafeReference search attribute.
 */
export const WebhookBody = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  idempotencyKey: z.string().optional(),
  reference: z.string().optional(),
  data: z.looseObject({ id: z.string().min(1) }),
});
export type WebhookBody = z.infer<typeof WebhookBody>;

export type RouteResult = { routed: true; key: string } | { routed: false; reason: string };

const FAILURE_TYPES = /\.(failed|declined|bounced|rejected)$/;

export function createWebhookRouter(deps: { client: Client; log?: Pick<Logger, 'info' | 'warn'> }) {
  const { client } = deps;

  async function findKey(event: WebhookBody): Promise<string | undefined> {
    for (const candidate of [event.idempotencyKey, event.reference]) {
      if (candidate && isActionKey(candidate)) return candidate;
    }
    if (!event.reference) return undefined;
    const query = `${SA_KIND.name} = 'action' AND ${SA_REFERENCE.name} = '${event.reference.replace(/'/g, "\\'")}'`;
    for await (const wf of client.workflow.list({ query, pageSize: 2 })) return wf.workflowId;
    return undefined;
  }

  async function route(raw: unknown): Promise<RouteResult> {
    const parsed = WebhookBody.safeParse(raw);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      return { routed: false, reason: `invalid event: ${field}: ${message}` };
    }
    const event = parsed.data;
    const key = await findKey(event);
    if (!key) return { routed: false, reason: `no action for event ${event.id} (${event.type})` };
    const evidence: ProviderEvent = {
      eventId: event.id,
      type: event.type,
      key,
      providerRef: event.data.id,
      outcome: FAILURE_TYPES.test(event.type) ? 'failed' : 'succeeded',
      receivedAt: new Date().toISOString(),
    };
    try {
      await client.workflow.getHandle(key).signal(providerEventSignal, evidence);
    } catch (err) {
      // A closed action already has its outcome; a late duplicate event changes nothing.
      if (err instanceof WorkflowNotFoundError) return { routed: false, reason: `action ${key} is closed` };
      throw err;
    }
    deps.log?.info({ key, eventId: event.id, type: event.type }, 'webhook routed to action');
    return { routed: true, key };
  }

  return { route };
}

function isActionKey(value: string): boolean {
  try {
    parseActionKey(value);
    return true;
  } catch {
    return false;
  }
}

/** An HTTP endpoint for the router: POST /webhooks (any provider). Answers 202 when routed, 200 when ignored. */
export async function startWebhookServer(
  router: ReturnType<typeof createWebhookRouter>,
  opts: { port?: number; host?: string } = {},
): Promise<{ url: string; close(): Promise<void>; received(): number }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.startsWith('/webhooks')) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 256 * 1024) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      received++;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'body is not JSON' }));
        return;
      }
      router.route(body).then(
        (result) =>
          res.writeHead(result.routed ? 202 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
        (err: Error) =>
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/webhooks`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
