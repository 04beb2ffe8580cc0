/**
 * The webhook router as its own process in this repository: `npm run webhooks` (the package's command is
 * `retrysafe webhooks`). Settings and behaviour: webhook-router-service.ts.
 */
import { createLogger } from './logger';
import { serveWebhooks, webhookServiceSettingsFromEnv } from './webhook-router-service';

async function main(): Promise<void> {
  const settings = webhookServiceSettingsFromEnv(process.env);
  await serveWebhooks(settings, { env: process.env, log: createLogger({ name: 'webhook-router' }) });
}

main().catch((err) => {
  process.stderr.write(`webhook router failed: ${(err as Error).message}\n`);
  process.exit(1);
});
