import { ordersDatabaseTools } from '../../examples/orders-database/tools';
import { smtpMailTools } from '../../examples/smtp-mail/tools';
import { stripeTools } from '../../examples/stripe-payments/tools';
import { startMailServer, startOrdersDatabase, startPaymentsServer } from '../lib/example-servers';
import { ToolchainError, missingPiece } from '../../cli/toolchain/toolchain-error';
import { type ConformanceSubject, SubjectUnavailable } from './types';

/**
 * The example tools on real servers (scripts/lib/example-servers.ts): a throw-away PostgreSQL for `record-order`, a
 * throw-away Mailpit for `send-notification`, a throw-away localstripe for `stripe-charge`. Effects are counted in the
 * server's own data: order rows by customer, messages and succeeded charges by subject or description, never
 * through the tool's dedupe record, Message-ID or metadata.
 */

/** A server that cannot be had here is reported and skipped; any other failure to start it is a failure. */
const unavailable = (what: string, hint: string) => (err: unknown) => {
  if (err instanceof ToolchainError) throw new SubjectUnavailable(`${what} (${missingPiece(err)}): ${hint}`);
  throw err;
};

export const postgresOrdersSubject: ConformanceSubject = {
  tool: 'record-order',
  provider: 'PostgreSQL',
  async start(log) {
    const db = await startOrdersDatabase(log).catch(unavailable('no PostgreSQL here', 'npm run setup:toolchain'));
    const sample = (tag: string) => ({ customer: tag, sku: 'SKU-PROBE', quantity: 1 });
    return {
      tool: ordersDatabaseTools(db.url)[0],
      providerVersion: db.describe.replace(/^PostgreSQL /, ''),
      sample: async (tag) => ({ input: sample(tag) }),
      effects: (tag) => db.orders(tag),
      // A quantity the table's CHECK refuses; the tool's schema would stop it before the database.
      invalid: async (tag) => ({ input: { ...sample(tag), quantity: 0 }, pastSchema: true }),
      restart: () => db.restart(),
      stop: () => db.stop(),
    };
  },
};

/** Recipients in this domain are refused at RCPT by the probe's Mailpit (`--smtp-allowed-recipients`). */
const REFUSED_DOMAIN = 'refused.example.net';

export const mailpitMailSubject: ConformanceSubject = {
  tool: 'send-notification',
  provider: 'Mailpit',
  async start(log) {
    const mail = await startMailServer({
      allowedRecipients: `^[^@]+@(?:[a-z0-9-]+\\.)*example\\.(?:com|org)$`,
      log,
    }).catch(unavailable('no Mailpit here', 'npm run setup:toolchain builds it'));
    const sample = (tag: string, to = 'ops@example.com') => ({ to, subject: `conformance ${tag}`, text: 'A probe.' });
    return {
      tool: smtpMailTools(mail.settings)[0],
      providerVersion: mail.describe.replace(/^Mailpit /, ''),
      sample: async (tag) => ({ input: sample(tag) }),
      effects: (tag) => mail.messages(`conformance ${tag}`),
      declined: async (tag) => ({ input: sample(tag, `someone@${REFUSED_DOMAIN}`) }),
      stop: () => mail.stop(),
    };
  },
};

/**
 * stripe-charge on localstripe, in the variant of the contract asked for (`lookup` by default). The tool always sends
 * the key as Stripe's Idempotency-Key, so the table says when the server ignored it.
 */
export const stripeChargeSubject: ConformanceSubject = {
  tool: 'stripe-charge',
  provider: 'localstripe',
  async start(log, contract) {
    const payments = await startPaymentsServer({ log }).catch(
      unavailable('no localstripe here', 'npm run setup:toolchain installs it with python3 and pip'),
    );
    const variant = contract === 'idempotency-key' ? 'idempotency-key' : 'lookup';
    const sample = (tag: string) => ({
      customerId: payments.customer,
      amountCents: 1500,
      currency: 'usd',
      description: `conformance ${tag}`,
    });
    return {
      tool: stripeTools({ ...payments.settings, contract: variant })[0],
      providerVersion: payments.describe.replace(/^localstripe /, ''),
      sendsKey: true,
      sample: async (tag) => ({ input: sample(tag) }),
      effects: (tag) => payments.charges(`conformance ${tag}`),
      declined: async (tag) => ({ input: { ...sample(tag), paymentMethod: payments.decliningCard } }),
      // A customer that does not exist: 404 resource_missing, a request that can never succeed.
      invalid: async (tag) => ({ input: { ...sample(tag), customerId: 'cus_nosuchcustomer' } }),
      stop: () => payments.stop(),
    };
  },
};
