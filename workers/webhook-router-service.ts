/**
 * The webhook router as a service, from its settings: `retrysafe webhooks` and this repository's `npm run webhooks`.
 * Providers post their events, signed as Standard Webhooks, to http://HOST:PORT/webhooks/<provider>; the router
 * verifies them against RETRYSAFE_WEBHOOK_SECRETS ({"<provider>": ["<current>", "<previous during a rotation>"]}) and
 * signals each verified one to its action. With RETRYSAFE_LEDGER (the workers' ledger), an event for an action its
 * run still acts on waits for the row to settle or for the action workflow instead of being answered as closed
 * (createWebhookRouter's `ledger`). The router only reads the ledger: it faces the internet, so it never creates or
 * migrates the schema (a worker does) and may run under a database role that can only read. To rotate a provider's
 * secret: list both, restart, switch the provider to the new one, then drop the old one and restart.
 */
import { z } from 'zod';
import { connectClient } from './connection';
import { LEDGER_ENV_VAR, ledgerConfigFromEnv, openLedgerForReading, redact } from '../ledger/ledger-config';
import type { ActionLedger } from '../ledger/action-ledger';
import { createWebhookRouter, startWebhookServer, type WebhookLog } from './webhook-router';
import { DEFAULT_TOLERANCE_SECONDS, parseWebhookSecrets } from './webhook-signature';

export const DEFAULT_WEBHOOK_PORT = 4200;

/** Digits only, within bounds: not `z.coerce`, which reads " " as 0 and "0x50" as 80. */
const wholeNumber = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().min(min).max(max));

const Env = z.object({
  RETRYSAFE_WEBHOOK_PORT: wholeNumber(0, 65535).default(DEFAULT_WEBHOOK_PORT),
  RETRYSAFE_WEBHOOK_HOST: z.string().default('127.0.0.1'),
  RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS: wholeNumber(1, 3600).default(DEFAULT_TOLERANCE_SECONDS),
  RETRYSAFE_LEDGER_WAIT_SECONDS: wholeNumber(0, 86_400).default(120),
});

/** What the router runs with, read from the environment; every malformed variable is named in one message. */
export function webhookServiceSettingsFromEnv(env: NodeJS.ProcessEnv) {
  // Unset, empty or blank: the default.
  const given = Object.fromEntries(
    Object.entries(env).flatMap(([name, value]) => (value?.trim() ? [[name, value.trim()]] : [])),
  );
  const parsed = Env.safeParse(given);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  }
  return {
    port: parsed.data.RETRYSAFE_WEBHOOK_PORT,
    host: parsed.data.RETRYSAFE_WEBHOOK_HOST,
    toleranceSeconds: parsed.data.RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS,
    ledgerWaitMs: parsed.data.RETRYSAFE_LEDGER_WAIT_SECONDS * 1000,
    secrets: parseWebhookSecrets(env.RETRYSAFE_WEBHOOK_SECRETS),
    ledger: ledgerConfigFromEnv(env),
  };
}

export type WebhookServiceSettings = ReturnType<typeof webhookServiceSettingsFromEnv>;

/** A running router: its base URL (`http://host:port/webhooks`) and how to stop it with its connection and ledger. */
export interface WebhookService {
  url: string;
  close(): Promise<void>;
}

/**
 * Connects to Temporal (standard environment configuration, as workers do), opens the workers' ledger for reading
 * when one is configured (waiting, up to `ledgerWaitMs`, for a worker to migrate it), and listens.
 */
export async function serveWebhooks(
  settings: WebhookServiceSettings,
  deps: { env: NodeJS.ProcessEnv; log: WebhookLog },
): Promise<WebhookService> {
  const { log } = deps;
  const { client, connection } = await connectClient(deps.env);
  let ledger: ActionLedger | undefined;
  try {
    if (settings.ledger) {
      const where = settings.ledger.kind === 'sqlite' ? settings.ledger.path : redact(settings.ledger.connectionString);
      let waited = 0;
      ledger = await openLedgerForReading(settings.ledger, {
        waitMs: settings.ledgerWaitMs,
        onWaiting: (err) => {
          // At the first look, then every tenth (about 10 s): a router pointed at the wrong ledger says so.
          if (waited++ % 10 === 0)
            log.warn({ ledger: where, reason: err.message }, 'waiting for a worker to migrate the ledger');
        },
      }).catch((err: Error) => {
        throw new Error(`${LEDGER_ENV_VAR} (${where}): ${err.message}`, { cause: err });
      });
    } else {
      log.warn(
        { setting: LEDGER_ENV_VAR },
        `${LEDGER_ENV_VAR} is not set: an event for an action without a workflow is answered as closed`,
      );
    }
    const router = createWebhookRouter({
      client,
      secrets: settings.secrets,
      ...(ledger ? { ledger } : {}),
      log,
      toleranceSeconds: settings.toleranceSeconds,
    });
    const server = await startWebhookServer(router, { port: settings.port, host: settings.host });
    // Provider names and how many secrets each has: never a secret. A list, not an object keyed by provider: the
    // logger redacts fields named like personal data, and `email` is a provider's name here.
    const providers = Object.entries(settings.secrets).map(([provider, list]) => ({ provider, secrets: list.length }));
    log.info({ url: server.url, providers, ledger: ledger !== undefined }, 'webhook router listening');
    return {
      url: server.url,
      async close() {
        await server.close();
        await ledger?.close();
        await connection.close();
      },
    };
  } catch (err) {
    await ledger?.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    throw err;
  }
}
