import { Client as PgClient } from 'pg';
import Stripe from 'stripe';

import { ORDERS_DATABASE_ENV, ORDERS_SCHEMA } from '../../examples/orders-database/tools';
import { SMTP_MAIL_ENV, type SmtpMailSettings } from '../../examples/smtp-mail/tools';
import { STRIPE_ENV, type StripeContract, type StripeSettings } from '../../examples/stripe-payments/tools';
import { resolveLocalstripe } from '../toolchain/resolve-localstripe';
import { resolveMailpit } from '../toolchain/resolve-mailpit';
import { startLocalstripe } from './localstripe-server';
import { startMailpit } from './mailpit-server';
import { startPostgres } from './postgres-server';

/**
 * The real servers of the example tools, started for the conformance check and the chaos harness: each in a
 * throw-away place on loopback, with the worker environment that points the tool's worker at it, and a count of
 * effects read from the server's own data (order rows, messages, charges), never from the tool's dedupe record.
 */
export interface ExampleServer {
  /** The server and its version, e.g. "PostgreSQL 15.18". */
  describe: string;
  /** The worker environment for the tool's worker entry. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface OrdersDatabase extends ExampleServer {
  url: string;
  /** Order rows for this customer. */
  orders(customer: string): Promise<number>;
  /** A crash of the database (`pg_ctl stop -m immediate`) and a start on the same data. */
  restart(): Promise<void>;
}

export async function startOrdersDatabase(log?: (line: string) => void): Promise<OrdersDatabase> {
  const pg = await startPostgres({ crashSafe: true, ...(log ? { log } : {}) });
  try {
    const url = await pg.createDatabase('orders');
    const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const db = new PgClient({ connectionString: url });
      await db.connect();
      try {
        return (await db.query(sql, params)).rows as T[];
      } finally {
        await db.end();
      }
    };
    await query(ORDERS_SCHEMA);
    const [{ server_version }] = await query<{ server_version: string }>('SHOW server_version');
    return {
      describe: `PostgreSQL ${server_version.split(' ')[0]}`,
      url,
      env: { [ORDERS_DATABASE_ENV]: url },
      async orders(customer) {
        const [{ n }] = await query<{ n: string }>('SELECT count(*) AS n FROM orders WHERE customer = $1', [customer]);
        return Number(n);
      },
      restart: () => pg.restart({ immediate: true }),
      stop: () => pg.stop(),
    };
  } catch (err) {
    await pg.stop();
    throw err;
  }
}

export interface MailServer extends ExampleServer {
  settings: SmtpMailSettings;
  /** Messages Mailpit holds with exactly this subject. */
  messages(subject: string): Promise<number>;
}

/** Mailpit, built by `npm run setup:toolchain` (never here: a missing build throws, naming the command). */
export async function startMailServer(
  opts: { allowedRecipients?: string; log?: (line: string) => void } = {},
): Promise<MailServer> {
  const resolved = await resolveMailpit({ build: false });
  const server = await startMailpit({
    binary: resolved.path,
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.allowedRecipients ? { smtpAllowedRecipients: opts.allowedRecipients } : {}),
  });
  const settings: SmtpMailSettings = { smtp: server.smtp, apiUrl: server.apiUrl, from: 'agent@example.com' };
  return {
    describe: `Mailpit ${resolved.version ?? `(${resolved.source} ${resolved.path})`}`,
    settings,
    env: {
      [SMTP_MAIL_ENV.smtpUrl]: `smtp://${server.smtp.host}:${server.smtp.port}`,
      [SMTP_MAIL_ENV.apiUrl]: server.apiUrl,
      [SMTP_MAIL_ENV.from]: settings.from,
    },
    async messages(subject) {
      const query = encodeURIComponent(`subject:"${subject}"`);
      const res = await fetch(`${server.apiUrl}/api/v1/search?query=${query}&limit=1000`);
      if (!res.ok) throw new Error(`Mailpit's search answered HTTP ${res.status}`);
      const { messages } = (await res.json()) as { messages: Array<{ Subject: string }> };
      return messages.filter((m) => m.Subject === subject).length;
    },
    stop: () => server.stop(),
  };
}

export interface PaymentsServer extends ExampleServer {
  settings: StripeSettings;
  /** A customer whose default card charges; and a card of theirs that localstripe declines. */
  customer: string;
  decliningCard: string;
  /** Succeeded charges with exactly this description, of any customer. */
  charges(description: string): Promise<number>;
}

/**
 * localstripe (installed by `npm run setup:toolchain`, never here), with one customer and its cards. `contract`
 * goes into the worker environment (RETRYSAFE_STRIPE_CONTRACT): `idempotency-key` is the one localstripe breaks.
 */
export async function startPaymentsServer(
  opts: { contract?: StripeContract; log?: (line: string) => void } = {},
): Promise<PaymentsServer> {
  const resolved = await resolveLocalstripe({ install: false });
  const server = await startLocalstripe({ localstripe: resolved, ...(opts.log ? { log: opts.log } : {}) });
  try {
    const base = new URL(server.url);
    const admin = new Stripe(server.apiKey, { host: base.hostname, port: base.port, protocol: 'http' });
    const customer = (await admin.customers.create({ name: 'retrysafe probes' })).id;
    const card = (await admin.paymentMethods.attach('pm_card_visa', { customer })).id;
    const decliningCard = (await admin.paymentMethods.attach('pm_card_chargeCustomerFail', { customer })).id;
    // localstripe charges a customer's invoice default when no source is named (Stripe its default source).
    await admin.customers.update(customer, { invoice_settings: { default_payment_method: card } });
    return {
      describe: `localstripe ${resolved.version ?? `of unknown version (${resolved.source})`}`,
      settings: { apiKey: server.apiKey, apiBase: server.url, ...(opts.contract ? { contract: opts.contract } : {}) },
      env: {
        [STRIPE_ENV.apiBase]: server.url,
        [STRIPE_ENV.secretKey]: server.apiKey,
        ...(opts.contract ? { [STRIPE_ENV.contract]: opts.contract } : {}),
      },
      customer,
      decliningCard,
      async charges(description) {
        // Every customer's: a probe that charges a customer that does not exist must not go uncounted.
        let n = 0;
        for await (const charge of admin.charges.list({ limit: 100 })) {
          if (charge.description === description && charge.status === 'succeeded') n++;
        }
        return n;
      },
      stop: () => server.stop(),
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}
