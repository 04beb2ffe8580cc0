import { parseArgs } from 'node:util';
import pino from 'pino';
import { z } from 'zod';
import { createEmailProvider } from './email';
import { createProviderServer } from './framework';
import type { ProviderDefinition } from './framework';
import { createInventoryProvider } from './inventory';
import { createPaymentsProvider } from './payments';
import { createShippingProvider } from './shipping';
import { createTicketsProvider } from './tickets';
import { ProviderKind } from './types';
import type { ListeningLine } from './types';

/**
 * One sandbox provider per process:
 *   tsx sandbox-providers/server.ts --kind payments --port 0 [--host 127.0.0.1] [--read-lag-ms 0] [--webhook-url URL]
 * Binds 127.0.0.1 unless --host says otherwise (docker-compose.yml passes 0.0.0.0 so other containers reach it).
 * Prints exactly one JSON line on stdout once listening; logs go to stderr. Exits on SIGTERM/SIGINT,
 * and when the parent that spawned it with an IPC channel goes away (so tests never leak processes).
 */

const PROVIDERS: Record<ProviderKind, () => ProviderDefinition> = {
  payments: createPaymentsProvider,
  email: createEmailProvider,
  tickets: createTicketsProvider,
  inventory: createInventoryProvider,
  shipping: createShippingProvider,
};

/** Loopback only by default: a sandbox provider has no authentication. */
const DEFAULT_HOST = '127.0.0.1';

const intArg = (name: string) =>
  z.coerce
    .number({ error: `--${name} must be a number` })
    .int(`--${name} must be an integer`)
    .nonnegative();

const Cli = z.object({
  kind: ProviderKind,
  port: intArg('port').max(65_535).default(0),
  host: z.string().trim().min(1, '--host must not be empty').default(DEFAULT_HOST),
  readLagMs: intArg('read-lag-ms').default(0),
  webhookUrl: z.url('--webhook-url must be a URL').optional(),
  webhookDelayMs: intArg('webhook-delay-ms').default(0),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** The webhook signing secret comes from the environment, never argv (which any local user can read in ps). */
const WEBHOOK_SECRET_ENV = 'RETRYSAFE_SANDBOX_WEBHOOK_SECRET';

function webhookSecretFromEnv(): string | null {
  const value = process.env[WEBHOOK_SECRET_ENV];
  if (!value) return null;
  if (!/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/.test(value)) {
    throw new Error(`${WEBHOOK_SECRET_ENV} must be a Standard Webhooks secret: whsec_ and base64`);
  }
  return value;
}

/** How long in-flight work may take to wind down before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 2_000;

function parseCli(argv: string[]): z.infer<typeof Cli> {
  const { values } = parseArgs({
    args: argv,
    options: {
      kind: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'read-lag-ms': { type: 'string' },
      'webhook-url': { type: 'string' },
      'webhook-delay-ms': { type: 'string' },
      'log-level': { type: 'string' },
    },
  });
  const parsed = Cli.safeParse({
    kind: values.kind,
    port: values.port,
    host: values.host,
    readLagMs: values['read-lag-ms'],
    webhookUrl: values['webhook-url'],
    webhookDelayMs: values['webhook-delay-ms'],
    logLevel: values['log-level'],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const hint = issue.path[0] === 'kind' ? ` (one of: ${ProviderKind.options.join(', ')})` : '';
    throw new Error(`Bad arguments: ${issue.path.join('.')}: ${issue.message}${hint}`);
  }
  return parsed.data;
}

/** Where a local client connects: a wildcard bind is reached through loopback; IPv6 literals need brackets. */
function connectHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

async function main(): Promise<void> {
  const cli = parseCli(process.argv.slice(2));
  const webhookSecret = webhookSecretFromEnv();
  const log = pino({ name: `sandbox-${cli.kind}`, level: cli.logLevel }, pino.destination(2));
  const provider = createProviderServer(
    PROVIDERS[cli.kind](),
    {
      readLagMs: cli.readLagMs,
      webhookUrl: cli.webhookUrl ?? null,
      webhookDelayMs: cli.webhookDelayMs,
      webhookSecret,
    },
    log,
  );
  const port = await provider.listen(cli.port, cli.host);
  const line: ListeningLine = {
    event: 'listening',
    kind: cli.kind,
    port,
    url: `http://${connectHost(cli.host)}:${port}`,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  log.info(line, 'listening');

  let stopping = false;
  const shutdown = (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'shutting down');
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    void provider.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  if (process.send) process.on('disconnect', () => shutdown('parent gone'));
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox provider failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
