import { Client as PgClient } from 'pg';

import { ORDERS_SCHEMA, ordersDatabaseTools } from '../../examples/orders-database/tools';
import { smtpMailTools } from '../../examples/smtp-mail/tools';
import { startMailpit } from '../lib/mailpit-server';
import { startPostgres } from '../lib/postgres-server';
import { MAILPIT_VERSION, resolveMailpit } from '../toolchain/resolve-mailpit';
import { type ConformanceSubject, SubjectUnavailable } from './types';

/**
 * The example tools on real servers, each started the way their tests start them: a throw-away PostgreSQL for
 * `record-order`, a throw-away Mailpit for `send-notification`. Effects are counted in the server's own data: order
 * rows by customer, messages by subject, never through the tool's dedupe record or Message-ID.
 */

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const db = new PgClient({ connectionString: url });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows as T[];
  } finally {
    await db.end();
  }
}

export const postgresOrdersSubject: ConformanceSubject = {
  tool: 'record-order',
  provider: 'PostgreSQL',
  async start(log) {
    const pg = await startPostgres({ log, crashSafe: true }).catch((err: unknown) => {
      throw new SubjectUnavailable(`no PostgreSQL here (${(err as Error).message.split('\n')[0]})`);
    });
    try {
      const url = await pg.createDatabase('orders');
      await query(url, ORDERS_SCHEMA);
      const [{ server_version }] = await query<{ server_version: string }>(url, 'SHOW server_version');
      const sample = (tag: string) => ({ customer: tag, sku: 'SKU-PROBE', quantity: 1 });
      return {
        tool: ordersDatabaseTools(url)[0],
        providerVersion: server_version,
        sample: async (tag) => ({ input: sample(tag) }),
        async effects(tag) {
          const [{ n }] = await query<{ n: string }>(url, 'SELECT count(*) AS n FROM orders WHERE customer = $1', [
            tag,
          ]);
          return Number(n);
        },
        // A quantity the table's CHECK refuses; the tool's schema would stop it before the database.
        invalid: async (tag) => ({ input: { ...sample(tag), quantity: 0 }, pastSchema: true }),
        restart: () => pg.restart({ immediate: true }),
        stop: () => pg.stop(),
      };
    } catch (err) {
      await pg.stop();
      throw err;
    }
  },
};

/** Recipients in this domain are refused at RCPT by the probe's Mailpit (`--smtp-allowed-recipients`). */
const REFUSED_DOMAIN = 'refused.example.net';

export const mailpitMailSubject: ConformanceSubject = {
  tool: 'send-notification',
  provider: 'Mailpit',
  async start(log) {
    const resolved = await resolveMailpit({ build: false }).catch((err: unknown) => {
      throw new SubjectUnavailable(`${(err as Error).message.split(';')[0]}: npm run setup:toolchain builds it`);
    });
    const server = await startMailpit({
      binary: resolved.path,
      log,
      smtpAllowedRecipients: `^[^@]+@(?:[a-z0-9-]+\\.)*example\\.(?:com|org)$`,
    });
    const tool = smtpMailTools({ smtp: server.smtp, apiUrl: server.apiUrl, from: 'conformance@example.com' })[0];
    const sample = (tag: string, to = 'ops@example.com') => ({ to, subject: `conformance ${tag}`, text: 'A probe.' });
    return {
      tool,
      providerVersion: resolved.version ?? `${MAILPIT_VERSION} or other (${resolved.source})`,
      sample: async (tag) => ({ input: sample(tag) }),
      async effects(tag) {
        const res = await fetch(`${server.apiUrl}/api/v1/messages?limit=1000`);
        if (!res.ok) throw new Error(`Mailpit's message list answered HTTP ${res.status}`);
        const { messages } = (await res.json()) as { messages: Array<{ Subject: string }> };
        return messages.filter((m) => m.Subject === `conformance ${tag}`).length;
      },
      declined: async (tag) => ({ input: sample(tag, `someone@${REFUSED_DOMAIN}`) }),
      stop: () => server.stop(),
    };
  },
};
