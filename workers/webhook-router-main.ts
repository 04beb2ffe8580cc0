/**
 * The webhook router as its own process: `npm run webhooks`. Providers post their events to
 * http://HOST:PORT/webhooks (RETRYSAFE_WEBHOOK_PORT, default 4200); each is signalled to its action.
 */
import { z } from 'zod';
import { connectClient } from './connection';
import { createLogger } from './logger';
import { createWebhookRouter, startWebhookServer } from './webhook-router';

const Env = z.object({
  RETRYSAFE_WEBHOOK_PORT: z.coerce.number().int().min(0).max(65535).default(4200),
  RETRYSAFE_WEBHOOK_HOST: z.string().default('127.0.0.1'),
});

async function main(): Promise<void> {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  const logger = createLogger({ name: 'webhook-router' });
  const { client } = await connectClient();
  const server = await startWebhookServer(createWebhookRouter({ client, log: logger }), {
    port: parsed.data.RETRYSAFE_WEBHOOK_PORT,
    host: parsed.data.RETRYSAFE_WEBHOOK_HOST,
  });
  logger.info({ url: server.url }, 'webhook router listening');
}

main().catch((err) => {
  process.stderr.write(`webhook router failed: ${(err as Error).message}\n`);
  process.exit(1);
});
