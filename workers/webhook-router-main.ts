/**
 * The webhook router as its own process: `npm run webhooks`. Each provider posts its events, signed as Standard Webhooks, to
 * http://HOST:PORT/webhooks/<provider> (RETRYSAFE_WEBHOOK_PORT, default 4200); the router verifies them
 * against RETRYSAFE_WEBHOOK_SECRETS ({"<provider>": ["<current>", "<previous during a rotation>"]}) and
 * signals each verified one to its action. With RETRYSAFE_LEDGER (the workers' ledger, only read), an event for an
 * action its run still acts on waits for the row to settle or for the action workflow instead of being answered as
 * closed (createWebhookRouter's `ledger`). It refuses to start without secrets. To rotate a provider's
 * secret: list both, restart, switch the provider to the new one, then drop the old one and restart.
 */
import { z } from 'zod';
import { connectClient } from './connection';
import { ledgerConfigFromEnv, openLedger } from '../ledger/ledger-config';
import { createLogger } from './logger';
import { createWebhookRouter, startWebhookServer } from './webhook-router';
import { DEFAULT_TOLERANCE_SECONDS, parseWebhookSecrets } from './webhook-signature';

const Env = z.object({
  RETRYSAFE_WEBHOOK_PORT: z.coerce.number().int().min(0).max(65535).default(4200),
  RETRYSAFE_WEBHOOK_HOST: z.string().default('127.0.0.1'),
  RETRYSAFE_WEBHOOK_SECRETS: z.string().optional(),
  RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(DEFAULT_TOLERANCE_SECONDS),
});

async function main(): Promise<void> {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  const secrets = parseWebhookSecrets(parsed.data.RETRYSAFE_WEBHOOK_SECRETS);
  const logger = createLogger({ name: 'webhook-router' });
  const { client } = await connectClient();
  // The router only reads rows; it brings the schema up to date as a worker does, so it may start before them.
  const ledgerConfig = ledgerConfigFromEnv(process.env);
  const ledger = ledgerConfig ? await openLedger(ledgerConfig) : undefined;
  if (!ledger)
    logger.warn('RETRYSAFE_LEDGER is not set: an event for an action without a workflow is answered as closed');
  const router = createWebhookRouter({
    client,
    secrets,
    ...(ledger ? { ledger } : {}),
    log: logger,
    toleranceSeconds: parsed.data.RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS,
  });
  const server = await startWebhookServer(router, {
    port: parsed.data.RETRYSAFE_WEBHOOK_PORT,
    host: parsed.data.RETRYSAFE_WEBHOOK_HOST,
  });
  // Provider names and how many secrets each has: never a secret.
  const providers = Object.fromEntries(Object.entries(secrets).map(([name, list]) => [name, list.length]));
  logger.info({ url: server.url, providers }, 'webhook router listening');
}

main().catch((err) => {
  process.stderr.write(`webhook router failed: ${(err as Error).message}\n`);
  process.exit(1);
});
