/**
 * `retrysafe webhooks`: the webhook router for a team's providers, run from the installed package. Flags override
 * the environment's RETRYSAFE_WEBHOOK_PORT and _HOST; everything else is the service's settings
 * (workers/webhook-router-service.ts). Beside a running `retrysafe dev` it finds that stack, as `retrysafe ops` does.
 */
import { withStackSettings } from '../dev/stack-file';
import { parseArgv } from '../ops/args';
import { UsageError } from '../ops/errors';
import { createLogger } from '../../workers/logger';
import {
  DEFAULT_WEBHOOK_PORT,
  serveWebhooks,
  webhookServiceSettingsFromEnv,
} from '../../workers/webhook-router-service';

export const WEBHOOKS_USAGE = `Usage: retrysafe webhooks [--port ${DEFAULT_WEBHOOK_PORT}] [--host 127.0.0.1]

The webhook router: each provider posts its events, signed as Standard Webhooks, to
http://HOST:PORT/webhooks/<provider>; a verified event is signalled to its action's workflow, where it is evidence
that the action's own checks weigh (a lookup, the provider's lag). Answers: 202 routed, 200 for an event no action
waits for, 400 unsigned or replayed, 401 a bad or stale signature, 503 try again later.

  --port PORT   the port to listen on (default RETRYSAFE_WEBHOOK_PORT, else ${DEFAULT_WEBHOOK_PORT}; 0: any free port)
  --host HOST   the address to listen on (default RETRYSAFE_WEBHOOK_HOST, else 127.0.0.1)
  -h, --help    this text

Settings: RETRYSAFE_WEBHOOK_SECRETS (required) '{"<provider>": ["<current secret>", "<previous, during a rotation>"]}',
each whsec_ and the base64 of at least 24 random bytes; RETRYSAFE_LEDGER, the workers' ledger (recommended: without
it an event for an action its run still acts on is answered as closed), only read: the router waits up to
RETRYSAFE_LEDGER_WAIT_SECONDS (120) for a worker to migrate it, and never migrates it or writes a row, so on
PostgreSQL it may run as a role that can only SELECT; RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS (300); Temporal's own
settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE), or the running
\`retrysafe dev\`.`;

/** Runs the router until SIGINT or SIGTERM; returns the exit code when it cannot start. */
export async function webhooksMain(argv: readonly string[]): Promise<number> {
  try {
    const { flags, positionals, help } = parseArgv(argv, { port: { type: 'string' }, host: { type: 'string' } });
    if (help) {
      process.stdout.write(`${WEBHOOKS_USAGE}\n`);
      return 0;
    }
    if (positionals.length > 0)
      throw new UsageError(`${positionals[0]}: unexpected argument; see retrysafe webhooks --help`);
    const port = flags.port as string | undefined;
    if (port !== undefined && !(/^\d+$/.test(port) && Number(port) <= 65_535))
      throw new UsageError(`--port: must be a port number from 0 to 65535, got "${port}"`);
    const host = flags.host as string | undefined;
    if (host !== undefined && host.trim() === '') throw new UsageError('--host: must be an address, got ""');
    const { env } = await withStackSettings(process.env);
    const settings = webhookServiceSettingsFromEnv({
      ...env,
      ...(port !== undefined ? { RETRYSAFE_WEBHOOK_PORT: port } : {}),
      ...(host !== undefined ? { RETRYSAFE_WEBHOOK_HOST: host } : {}),
    });
    const service = await serveWebhooks(settings, { env, log: createLogger({ name: 'webhook-router' }) });
    const stop = () =>
      void service.close().then(
        () => process.exit(0),
        (err: unknown) => {
          process.stderr.write(`retrysafe webhooks: stopping: ${err instanceof Error ? err.message : String(err)}\n`);
          process.exit(1);
        },
      );
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return 0;
  } catch (err) {
    process.stderr.write(`retrysafe webhooks: ${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}
