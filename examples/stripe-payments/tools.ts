/**
 * An example tool on Stripe through its official SDK (`stripe`): `stripe-charge` charges a customer's card with the
 * Charges API. The action key goes out twice: as the Idempotency-Key, which Stripe answers a resend from, and as the
 * charge's `metadata.retrysafe_key`, which a lookup can find. Which of the two a retry relies on is the contract,
 * chosen per worker:
 *
 *   idempotency-key  what Stripe documents: a resend with the key gets the first charge back (keys are kept at least
 *                    24 h). No lookup. localstripe, the fake Stripe the tests run against, ignores Idempotency-Key,
 *                    so there this contract charges twice when a worker dies after the charge: the honest result
 *                    test/real-providers/localstripe-charges.test.ts counts.
 *   lookup           before any resend, list the customer's charges and find the one carrying the key: right for a
 *                    server that keeps metadata, whatever it does with keys. The example worker's default.
 *
 * The Charges API, not PaymentIntents (which Stripe recommends for new integrations): localstripe's PaymentIntents
 * cannot be filtered when listed and report a declined card only later, so neither the lookup nor the declined
 * outcome could be tested on them.
 */
import Stripe from 'stripe';
import { z } from 'zod';
import {
  PROVIDER_REQUEST_TIMEOUT_MS,
  absent,
  ambiguous,
  committed,
  defineTool,
  found,
  notCommitted,
  rejected,
  type Json,
  type LookupAnswer,
  type ToolContext,
  type ToolOutcome,
} from 'retrysafe';

/** The dedupe contract a worker declares for `stripe-charge` (see the head comment). */
export const STRIPE_CONTRACTS = ['lookup', 'idempotency-key'] as const;
export type StripeContract = (typeof STRIPE_CONTRACTS)[number];

export interface StripeSettings {
  /** A secret (`sk_…`) or restricted (`rk_…`) key. */
  apiKey: string;
  /** `http(s)://host:port` of the API: https://api.stripe.com, or a fake such as localstripe. */
  apiBase: string;
  /** Default `lookup`. */
  contract?: StripeContract;
}

/** The metadata field that carries the action key on every charge the tool creates. */
export const KEY_METADATA = 'retrysafe_key';

const text = (max: number) =>
  z
    .string()
    .transform((s) => s.normalize('NFC').trim())
    .pipe(z.string().min(1).max(max));

export const StripeCharge = z.strictObject({
  customerId: z
    .string()
    .trim()
    .regex(/^cus_[A-Za-z0-9]{1,100}$/, 'must be a Stripe customer ID (cus_…)'),
  /**
   * Charged instead of the customer's default. Without it the Charges API charges the customer's default source on
   * Stripe, while localstripe takes the invoice settings' default payment method: only the localstripe path is tested.
   * Stripe's test IDs (pm_card_visa) have underscores.
   */
  paymentMethod: z
    .string()
    .trim()
    .regex(/^pm_[A-Za-z0-9_]{1,100}$/, 'must be a Stripe payment method ID (pm_…)')
    .optional(),
  amountCents: z.number().int('must be an integer number of minor units').positive().max(100_000_000),
  currency: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z]{3}$/, 'must be a three-letter ISO currency code'),
  description: text(200),
});

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

export function stripeTools(settings: StripeSettings) {
  const stripe = stripeClient(settings);
  const contract = settings.contract ?? 'lookup';

  const common = {
    name: 'stripe-charge',
    version: 1,
    description:
      "Charge a Stripe customer's card (their default source unless a payment method is named). amountCents is an " +
      'integer number of minor units (4990 = 49.90).',
    input: StripeCharge,
    kind: 'mutation',
    riskClass: 'money-movement',
    amountField: 'amountCents',
    currencyField: 'currency',
    // 1 000.00 in the currency's minor units: an agent's single charge above it goes to a person.
    limits: { amountCents: { max: 100_000 } },
    summarize: (i: StripeCharge) =>
      `charge ${money(i.amountCents, i.currency)} to ${i.customerId}: ${i.description.slice(0, 60)}`,
    dryRun: (i: StripeCharge) => ({
      target: `Stripe customer ${i.customerId} (${i.paymentMethod ? `payment method ${i.paymentMethod}` : 'default source'})`,
      scope: `one charge of ${i.amountCents} ${i.currency.toUpperCase()} minor units`,
    }),
    async execute(i: StripeCharge, ctx: ToolContext): Promise<ToolOutcome> {
      let charge: Stripe.Response<Stripe.Charge>;
      try {
        charge = await stripe.charges.create(
          {
            amount: i.amountCents,
            currency: i.currency,
            customer: i.customerId,
            // As the charge's source, where localstripe takes a pm_ ID (not tried against Stripe itself).
            ...(i.paymentMethod ? { source: i.paymentMethod } : {}),
            description: i.description,
            metadata: { [KEY_METADATA]: ctx.key },
          },
          { idempotencyKey: ctx.key },
        );
      } catch (err) {
        return outcomeOfStripeError(err);
      }
      // Stripe marks an answer it replays from its memory of the key; localstripe never does.
      const replayed = charge.lastResponse.headers['idempotent-replayed'] === 'true';
      return committed(charge.id, chargeRecord(charge), replayed);
    },
  } as const;

  const chargeTool =
    contract === 'idempotency-key'
      ? defineTool({
          ...common,
          dedupe: 'idempotency-key',
          // Nothing here reads back what was written.
          readAfterWriteLagMs: 0,
          // Stripe prunes keys once they are at least 24 hours old.
          keyRetentionMs: 24 * 60 * 60 * 1000,
        })
      : defineTool({
          ...common,
          dedupe: 'lookup',
          // Stripe documents its list APIs as fit for read-after-write, unlike its Search API (searchable "in under
          // 1 minute", later during an outage), which would find the metadata in one request: so the lookup lists.
          // localstripe answers from memory. The 2 s are a margin for a loaded machine.
          readAfterWriteLagMs: 2_000,
          async lookup(i: StripeCharge, ctx: ToolContext): Promise<LookupAnswer> {
            // localstripe filters charges only by customer and creation time, and Stripe's list has no metadata
            // filter: page through the customer's charges (the SDK's auto-pagination) and match the key. An error
            // is thrown on: it proves nothing either way.
            const failed: string[] = [];
            for await (const charge of stripe.charges.list({ customer: i.customerId, limit: 100 })) {
              if (charge.metadata?.[KEY_METADATA] !== ctx.key) continue;
              // A declined charge is an object too, but no money moved: it is not the effect.
              if (charge.status === 'failed') {
                failed.push(charge.id);
                continue;
              }
              return found(charge.id, chargeRecord(charge), `charge ${charge.id} of ${i.customerId} carries the key`);
            }
            return absent(
              `no charge of ${i.customerId} carries the key${failed.length ? ` but the failed ${failed.join(', ')}` : ''}`,
            );
          },
        });
  return [chargeTool];
}

type StripeCharge = z.output<typeof StripeCharge>;

function chargeRecord(charge: Stripe.Charge): Json {
  return { amount: charge.amount, currency: charge.currency, status: charge.status };
}

/**
 * The SDK's client for `settings`. `maxNetworkRetries: 0` because the executor owns retries and must see every
 * request; the SDK's own HTTP client is wrapped so that it does not resend a request whose connection closed
 * (see noSilentResend). The SDK takes no AbortSignal: the timeout bounds every request instead.
 */
function stripeClient(settings: StripeSettings): Stripe {
  const base = new URL(settings.apiBase);
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(settings.apiKey, {
    host: base.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: base.port || (protocol === 'http' ? 80 : 443),
    protocol,
    maxNetworkRetries: 0,
    timeout: PROVIDER_REQUEST_TIMEOUT_MS,
    telemetry: false,
    httpClient: noSilentResend(Stripe.createNodeHttpClient()),
  });
}

/**
 * stripe-node resends a request once when its connection closed (ECONNRESET, EPIPE), even with maxNetworkRetries
 * 0, because that usually means a stale keep-alive socket; its own comment grants the request may have been
 * processed. With the key, Stripe answers the resend with the first charge; a server that ignores keys charges
 * again, and the executor never learns a second request went out. Renaming the code stops that resend: the
 * failure reaches the tool, which calls it ambiguous, and the contract's rules decide.
 */
function noSilentResend(inner: Stripe.HttpClient): Stripe.HttpClient {
  return {
    getClientName: () => inner.getClientName(),
    makeRequest: (...args) =>
      inner.makeRequest(...args).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (code !== 'ECONNRESET' && code !== 'EPIPE') throw err;
        throw Object.assign(new Error(`connection closed before the answer (${code})`, { cause: err }), {
          code: `CLOSED_${code}`,
        });
      }),
  };
}

/**
 * What a failed request means, by the SDK's error classes (stripe-node maps statuses onto them in Error.js):
 *
 *   StripeCardError 402            rejected declined   the card was refused; Stripe stores a failed charge
 *   StripeIdempotencyError 400     rejected conflict   the key was used with other parameters
 *   StripeRateLimitError 429       not committed       Stripe's rate limiters run before the API does anything
 *   StripeInvalidRequestError      rejected invalid    400, or 404 for a customer or payment method that does not
 *                                                      exist: the request itself is wrong, so outcomeOfStatus's
 *                                                      404-as-declined does not fit
 *   StripeAuthenticationError 401,
 *   StripePermissionError 403      rejected unauthorized
 *   StripeConnectionError          not committed only when the TCP connect (or the name lookup before it)
 *                                  failed: nothing was sent. A timeout, a reset or a cut answer may follow a
 *                                  request Stripe processed: ambiguous
 *   StripeAPIError and the rest    ambiguous: 5xx (Stripe documents a 500 as indeterminate), 409 (another request
 *                                  with the key is in flight), an answer that is not JSON
 */
export function outcomeOfStripeError(err: unknown): ToolOutcome {
  if (!(err instanceof Stripe.errors.StripeError)) return ambiguous(`Stripe request failed: ${String(err)}`);
  const status = err.statusCode;
  const message = `${err.code ? `${err.code}: ` : ''}${err.message}`;
  if (err instanceof Stripe.errors.StripeCardError) return rejected('declined', message, status);
  if (err instanceof Stripe.errors.StripeIdempotencyError) return rejected('conflict', message, status);
  if (err instanceof Stripe.errors.StripeRateLimitError) return notCommitted(`rate limited: ${message}`);
  if (err instanceof Stripe.errors.StripeInvalidRequestError) return rejected('invalid', message, status);
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError) {
    return rejected('unauthorized', message, status);
  }
  if (err instanceof Stripe.errors.StripeConnectionError) {
    const detail = err.detail as { syscall?: unknown; code?: unknown; message?: unknown } | undefined;
    const why = `${err.message}${typeof detail?.message === 'string' ? ` (${detail.message})` : ''}`;
    if (detail?.syscall === 'connect' || detail?.syscall === 'getaddrinfo') {
      return notCommitted(`could not connect to Stripe: ${why}`);
    }
    return ambiguous(`the connection failed after the request may have been sent: ${why}`);
  }
  return ambiguous(`Stripe answered${status !== undefined ? ` HTTP ${status}` : ''}: ${message}`);
}

/** The worker's settings, from its environment; a bad one is named. */
export const STRIPE_ENV = {
  apiBase: 'RETRYSAFE_STRIPE_API_BASE',
  secretKey: 'RETRYSAFE_STRIPE_SECRET_KEY',
  contract: 'RETRYSAFE_STRIPE_CONTRACT',
} as const;

const StripeEnv = z.object({
  [STRIPE_ENV.apiBase]: z
    .url({ protocol: /^https?$/, message: `${STRIPE_ENV.apiBase} must be an http(s)://host:port URL` })
    .default('https://api.stripe.com'),
  [STRIPE_ENV.secretKey]: z
    .string({ message: `${STRIPE_ENV.secretKey} must be set to a Stripe secret key (sk_…)` })
    .regex(/^(sk|rk)_\S{3,}$/, `${STRIPE_ENV.secretKey} must be a Stripe secret (sk_…) or restricted (rk_…) key`),
  [STRIPE_ENV.contract]: z
    .enum(STRIPE_CONTRACTS, { message: `${STRIPE_ENV.contract} must be ${STRIPE_CONTRACTS.join(' or ')}` })
    .default('lookup'),
});

export function stripeSettingsFromEnv(env: NodeJS.ProcessEnv): Required<StripeSettings> {
  const parsed = StripeEnv.safeParse(env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('; '));
  const base = new URL(parsed.data[STRIPE_ENV.apiBase]);
  if (base.pathname !== '/' || base.search || base.hash) {
    throw new Error(`${STRIPE_ENV.apiBase} must be http(s)://host:port, without a path (the SDK adds /v1/…)`);
  }
  return {
    apiKey: parsed.data[STRIPE_ENV.secretKey],
    apiBase: base.origin,
    contract: parsed.data[STRIPE_ENV.contract],
  };
}
