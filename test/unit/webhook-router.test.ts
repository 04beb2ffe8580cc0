import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ProviderEvent } from '../../messages/action';
import { SA_TENANT } from '../../policies/search-attributes';
import { createWebhookRouter, startWebhookServer } from '../../workers/webhook-router';
import { webhookHeaders } from '../../workers/webhook-signature';
import Stripe from 'stripe';
import { stripeEventVerifier } from '../../examples/stripe-payments/webhooks';

/**
 * The router's decisions with a stand-in for Temporal that records every signal and answers visibility
 * queries from a table: what is refused (and with which status), what is signalled, and what is logged.
 */

/** A Standard Webhooks secret: whsec_ and the base64 of (here, not random) 32 bytes. */
const secretNamed = (name: string) => `whsec_${Buffer.from(name.padEnd(32, '.')).toString('base64')}`;
const SECRET = secretNamed('payments');
const NEXT = secretNamed('payments-next');
const TICKETS_SECRET = secretNamed('tickets');
const KEY = 'charge:v1:acme:renewal-1';
/** A marker that must never reach a log line: it only ever appears inside bodies. */
const BODY_MARKER = 'customer-secret-marker@example.com';

interface Listed {
  workflowId: string;
  tenant: string;
  reference: string;
}

function fakeTemporal(listed: Listed[] = []) {
  const signals: Array<{ workflowId: string; event: ProviderEvent }> = [];
  const queries: string[] = [];
  /** Workflows that are not there (never started yet, or closed): a signal to one is WorkflowNotFoundError. */
  const absent = new Set<string>();
  let signalAttempts = 0;
  let failNext: Error | undefined;
  const client = {
    workflow: {
      list({ query }: { query: string }) {
        queries.push(query);
        const reference = /RetrysafeReference = '([^']*)'/.exec(query)?.[1];
        const tenant = /RetrysafeTenant = '([^']*)'/.exec(query)?.[1];
        const rows = listed.filter((l) => l.reference === reference && (tenant === undefined || l.tenant === tenant));
        return (async function* () {
          for (const row of rows) {
            yield {
              workflowId: row.workflowId,
              typedSearchAttributes: { get: (k: unknown) => (k === SA_TENANT ? row.tenant : undefined) },
            };
          }
        })();
      },
      getHandle(workflowId: string) {
        return {
          async signal(_def: unknown, event: ProviderEvent) {
            signalAttempts++;
            if (absent.has(workflowId)) throw new WorkflowNotFoundError('not found', workflowId, undefined);
            if (failNext) {
              const err = failNext;
              failNext = undefined;
              throw err;
            }
            signals.push({ workflowId, event });
          },
        };
      },
    },
  } as unknown as Client;
  return {
    client,
    signals,
    queries,
    absent,
    signalAttempts: () => signalAttempts,
    failOnce: (err: Error) => (failNext = err),
  };
}

function logCapture() {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    info: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', obj, msg }),
  };
}

let nowMs = 1_790_000_000_000;
const nowSeconds = () => Math.floor(nowMs / 1000);

function event(overrides: Record<string, unknown> = {}) {
  return {
    id: `evt_${Math.random().toString(36).slice(2)}`,
    type: 'charge.succeeded',
    idempotencyKey: KEY,
    data: { id: 'ch_1', receiptEmail: BODY_MARKER },
    ...overrides,
  };
}

function delivery(
  body: unknown,
  opts: { secret?: string | string[]; t?: number; provider?: string; raw?: string } = {},
) {
  const raw = opts.raw ?? JSON.stringify(body);
  // The provider's message ID is the event's: a retry of one event carries the same webhook-id.
  const id = (body as { id?: string }).id ?? 'msg_1';
  return {
    provider: opts.provider ?? 'payments',
    headers: opts.secret === undefined ? {} : webhookHeaders(opts.secret, id, opts.t ?? nowSeconds(), raw),
    rawBody: Buffer.from(raw),
  };
}

describe('webhook router', () => {
  let temporal: ReturnType<typeof fakeTemporal>;
  let log: ReturnType<typeof logCapture>;
  let secrets: Record<string, string[]>;
  let router: ReturnType<typeof createWebhookRouter>;

  beforeEach(() => {
    temporal = fakeTemporal([
      { workflowId: 'create-ticket:v1:acme:t-1', tenant: 'acme', reference: 'TK-shared' },
      { workflowId: 'create-ticket:v1:globex:t-9', tenant: 'globex', reference: 'TK-shared' },
      { workflowId: 'create-ticket:v1:acme:t-2', tenant: 'acme', reference: 'TK-acme-only' },
      { workflowId: 'create-ticket:v1:acme:t-3', tenant: 'acme', reference: 'TK-twice' },
      { workflowId: 'create-ticket:v1:acme:t-4', tenant: 'acme', reference: 'TK-twice' },
    ]);
    log = logCapture();
    secrets = { payments: [SECRET], tickets: [TICKETS_SECRET] };
    router = createWebhookRouter({ client: temporal.client, secrets: () => secrets, log, now: () => nowMs });
  });

  function assertNothingLoggedFromBodies() {
    const text = JSON.stringify(log.lines);
    assert.ok(!text.includes(BODY_MARKER), `a body reached the log: ${text}`);
    assert.ok(!text.includes('ch_forged'), `a body reached the log: ${text}`);
  }

  it('signals a verified event to the action its key names', async () => {
    const body = event();
    const answer = await router.receive(delivery(body, { secret: SECRET }));
    assert.equal(answer.status, 202);
    assert.deepEqual(answer.body, { routed: true, key: KEY, reason: 'routed' });
    assert.equal(temporal.signals.length, 1);
    assert.equal(temporal.signals[0].workflowId, KEY);
    assert.deepEqual(
      { ...temporal.signals[0].event, receivedAt: undefined },
      {
        eventId: body.id,
        type: 'charge.succeeded',
        key: KEY,
        provider: 'payments',
        providerRef: 'ch_1',
        outcome: 'succeeded',
        receivedAt: undefined,
      },
    );
  });

  it('refuses unsigned, forged, stale, retired-secret and other-provider-secret deliveries, signalling nothing', async () => {
    const forgedBody = event({ data: { id: 'ch_forged', receiptEmail: BODY_MARKER } });
    const cases: Array<[string, ReturnType<typeof delivery>, number, RegExp]> = [
      ['unsigned', delivery(forgedBody), 400, /signature unsigned/],
      ['forged', delivery(forgedBody, { secret: secretNamed('guessed-by-the-attacker') }), 401, /signature mismatch/],
      ['stale', delivery(forgedBody, { secret: SECRET, t: nowSeconds() - 301 }), 401, /signature stale/],
      ['from the future', delivery(forgedBody, { secret: SECRET, t: nowSeconds() + 301 }), 401, /signature stale/],
      ['another provider’s secret', delivery(forgedBody, { secret: TICKETS_SECRET }), 401, /signature mismatch/],
      [
        'malformed',
        {
          ...delivery(forgedBody),
          headers: { ...delivery(forgedBody, { secret: SECRET }).headers, 'webhook-signature': 'v1=zz' },
        },
        400,
        /signature malformed/,
      ],
      [
        'body swapped under a valid signature',
        { ...delivery(event(), { secret: SECRET }), rawBody: Buffer.from(JSON.stringify(forgedBody)) },
        401,
        /signature mismatch/,
      ],
    ];
    for (const [name, d, status, reason] of cases) {
      const answer = await router.receive(d);
      assert.equal(answer.status, status, name);
      assert.match(answer.body.reason, reason, name);
      assert.equal(answer.body.routed, false);
    }
    assert.equal(temporal.signals.length, 0, 'nothing was signalled');
    assert.equal(log.lines.filter((l) => l.msg === 'webhook refused').length, cases.length, 'each refusal is logged');
    for (const line of log.lines)
      assert.deepEqual(Object.keys(line.obj).sort(), ['bytes', 'provider', 'reason', 'status']);
    assertNothingLoggedFromBodies();
  });

  it('refuses a replayed event ID per provider, even re-signed, and lets a retry through after a failed signal', async () => {
    const body = event();
    const first = delivery(body, { secret: SECRET });
    assert.equal((await router.receive(first)).status, 202);
    const replay = await router.receive(first);
    assert.equal(replay.status, 400);
    assert.match(replay.body.reason, /replayed/);
    nowMs += 30_000;
    const resigned = await router.receive(delivery(body, { secret: SECRET }));
    assert.equal(resigned.status, 400, 'the same ID signed again later is still a replay');
    assert.equal(temporal.signals.length, 1);

    const other = event();
    temporal.failOnce(new Error('temporal unavailable'));
    assert.equal((await router.receive(delivery(other, { secret: SECRET }))).status, 503);
    assert.equal((await router.receive(delivery(other, { secret: SECRET }))).status, 202, 'the retry is accepted');
    assert.equal(temporal.signals.length, 2);
    assertNothingLoggedFromBodies();
  });

  it('takes the current and the previous secret during a rotation, then refuses the retired one', async () => {
    secrets = { payments: [NEXT, SECRET] };
    assert.equal((await router.receive(delivery(event(), { secret: SECRET }))).status, 202, 'old secret');
    assert.equal((await router.receive(delivery(event(), { secret: NEXT }))).status, 202, 'new secret');
    secrets = { payments: [NEXT] };
    assert.equal((await router.receive(delivery(event(), { secret: SECRET }))).status, 401, 'retired secret');
    assert.equal((await router.receive(delivery(event(), { secret: NEXT }))).status, 202);
    assert.equal(temporal.signals.length, 3);
  });

  it('answers 404 for a provider it holds no secret for', async () => {
    const answer = await router.receive(delivery(event(), { secret: SECRET, provider: 'shipping' }));
    assert.equal(answer.status, 404);
    assert.equal(temporal.signals.length, 0);
  });

  it('refuses a reference carried by actions of two tenants instead of taking the first, and logs why', async () => {
    const body = { id: 'evt_t1', type: 'ticket.created', reference: 'TK-shared', data: { id: 'tk_1' } };
    const answer = await router.receive(delivery(body, { secret: TICKETS_SECRET, provider: 'tickets' }));
    assert.equal(answer.status, 200);
    assert.equal(answer.body.routed, false);
    assert.match(answer.body.reason, /2 actions of tenants acme, globex; refusing to guess/);
    assert.equal(temporal.signals.length, 0);
    const warned = log.lines.find((l) => l.msg === 'webhook not routed');
    assert.ok(warned, JSON.stringify(log.lines));
    assert.match(String(warned.obj.reason), /tenants acme, globex/);
  });

  it('refuses a reference two actions of one tenant carry, and routes one carried by a single action', async () => {
    const twice = { id: 'evt_t2', type: 'ticket.created', reference: 'TK-twice', data: { id: 'tk_2' } };
    const refused = await router.receive(delivery(twice, { secret: TICKETS_SECRET, provider: 'tickets' }));
    assert.equal(refused.body.routed, false);
    assert.match(refused.body.reason, /2 actions of tenant acme/);
    const once = { id: 'evt_t3', type: 'ticket.created', reference: 'TK-acme-only', data: { id: 'tk_3' } };
    const routed = await router.receive(delivery(once, { secret: TICKETS_SECRET, provider: 'tickets' }));
    assert.equal(routed.status, 202);
    assert.deepEqual(
      temporal.signals.map((s) => s.workflowId),
      ['create-ticket:v1:acme:t-2'],
    );
  });

  it("queries by the event's tenant when the provider names one, and never routes across tenants", async () => {
    const forAcme = {
      id: 'evt_t4',
      type: 'ticket.created',
      reference: 'TK-shared',
      tenant: 'acme',
      data: { id: 'tk_4' },
    };
    assert.equal(
      (await router.receive(delivery(forAcme, { secret: TICKETS_SECRET, provider: 'tickets' }))).status,
      202,
    );
    assert.match(temporal.queries.at(-1)!, /RetrysafeTenant = 'acme'/);
    const forInitech = { ...forAcme, id: 'evt_t5', reference: 'TK-acme-only', tenant: 'initech' };
    const none = await router.receive(delivery(forInitech, { secret: TICKETS_SECRET, provider: 'tickets' }));
    assert.equal(none.body.routed, false);
    const keyed = event({ tenant: 'globex' });
    const mismatch = await router.receive(delivery(keyed, { secret: SECRET }));
    assert.equal(mismatch.body.routed, false);
    assert.match(mismatch.body.reason, /tenant globex, but action charge:v1:acme:renewal-1 belongs to tenant acme/);
    const twoKeys = event({ reference: 'charge:v1:globex:renewal-1' });
    const ambiguous = await router.receive(delivery(twoKeys, { secret: SECRET }));
    assert.match(ambiguous.body.reason, /names two different actions/);
    assert.deepEqual(
      temporal.signals.map((s) => s.workflowId),
      ['create-ticket:v1:acme:t-1'],
    );
  });

  it('does not put a reference with quotes into a query', async () => {
    const body = { id: 'evt_q', type: 'ticket.created', reference: "x' OR RetrysafeTenant != '", data: { id: 'tk_5' } };
    const answer = await router.receive(delivery(body, { secret: TICKETS_SECRET, provider: 'tickets' }));
    assert.equal(answer.body.routed, false);
    assert.equal(temporal.queries.length, 0);
  });

  it('answers 200 for a closed action: it already has its outcome', async () => {
    temporal.failOnce(new WorkflowNotFoundError('closed', KEY, undefined));
    const answer = await router.receive(delivery(event(), { secret: SECRET }));
    assert.equal(answer.status, 200);
    assert.match(answer.body.reason, /is closed/);
  });

  describe('an action without a workflow, told apart by the ledger row', () => {
    type Row = { status: string; holder?: string } | undefined;
    /** The row the router reads, as a script over its reads: the last one repeats. */
    function withLedger(rows: Row[], opts: { onSleep?: (sleeps: number) => void } = {}) {
      let reads = 0;
      let sleeps = 0;
      const ledger = {
        get: async () => rows[Math.min(reads++, rows.length - 1)] as never,
      };
      const routed = createWebhookRouter({
        client: temporal.client,
        secrets: () => secrets,
        log,
        now: () => nowMs,
        ledger,
        sleep: async (ms) => {
          sleeps++;
          nowMs += ms;
          opts.onSleep?.(sleeps);
        },
      });
      return { routed, reads: () => reads, sleeps: () => sleeps };
    }
    const runHolder = 'run:run:acme:renewal-1/tok#7.1';

    it('answers a settled action at once: its outcome stands, nothing waits', async () => {
      temporal.absent.add(KEY);
      const t = withLedger([{ status: 'confirmed', holder: runHolder }]);
      const answer = await t.routed.receive(delivery(event(), { secret: SECRET }));
      assert.equal(answer.status, 200);
      assert.match(answer.body.reason, /is settled \(confirmed\) and has no workflow/);
      assert.equal(t.sleeps(), 0);
      assert.equal(temporal.signalAttempts(), 1);
    });

    it('answers an action the ledger never saw as not routed', async () => {
      temporal.absent.add(KEY);
      const t = withLedger([undefined]);
      const answer = await t.routed.receive(delivery(event(), { secret: SECRET }));
      assert.equal(answer.status, 200);
      assert.match(answer.body.reason, /no action .* is on record/);
    });

    it("holds an event that raced the run's act until the row settles, without signalling again", async () => {
      temporal.absent.add(KEY);
      const t = withLedger([
        { status: 'dispatching', holder: runHolder },
        { status: 'dispatching', holder: runHolder },
        { status: 'confirmed', holder: runHolder },
      ]);
      const answer = await t.routed.receive(delivery(event(), { secret: SECRET }));
      assert.equal(answer.status, 200);
      assert.match(answer.body.reason, /settled \(confirmed\)/);
      assert.equal(t.reads(), 3);
      assert.equal(temporal.signalAttempts(), 1, 'a row its act holds gets no signal while the act runs');
    });

    it('signals the action workflow once the run has handed an unknown outcome over to it', async () => {
      temporal.absent.add(KEY);
      // The act wrote unknown and let go; the action workflow starts after a few polls.
      const t = withLedger([{ status: 'unknown', holder: runHolder }], {
        onSleep: (sleeps) => {
          if (sleeps === 8) temporal.absent.delete(KEY);
        },
      });
      const answer = await t.routed.receive(delivery(event(), { secret: SECRET }));
      assert.equal(answer.status, 202);
      assert.equal(answer.body.key, KEY);
      assert.equal(temporal.signals.length, 1);
      assert.equal(temporal.signals[0].workflowId, KEY);
      assert.equal(temporal.signals[0].event.providerRef, 'ch_1');
    });

    /**
     * A first delivery for an action with no workflow whose ledger row says `status`, held at `sleep` until `release`
     * opens the gate, as it would be while the run's act settles the row; once the gate opens, a sleep passes the whole
     * hold. `send` delivers the same event again.
     */
    async function holdFirst(status: string, unsettledWaitMs = 60_000) {
      temporal.absent.add(KEY);
      const rows: Row[] = [{ status, holder: runHolder }];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const routed = createWebhookRouter({
        client: temporal.client,
        secrets: () => secrets,
        log,
        now: () => nowMs,
        unsettledWaitMs,
        ledger: { get: async () => rows[0] as never },
        sleep: async () => {
          await gate;
          nowMs += unsettledWaitMs;
        },
      });
      const body = event();
      const send = () => routed.receive(delivery(body, { secret: SECRET }));
      const first = send();
      await new Promise((resolve) => setImmediate(resolve));
      return { rows, release, first, send };
    }

    it('answers a copy that arrives while the first is held with the first’s answer: a replay once it is taken', async () => {
      const { rows, release, first, send } = await holdFirst('dispatching');
      let copyAnswered = false;
      const copy = send().finally(() => (copyAnswered = true));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(copyAnswered, false, 'the copy waits while the first is held');
      rows[0] = { status: 'confirmed', holder: runHolder };
      release();
      assert.equal((await first).status, 200);
      const copyAnswer = await copy;
      assert.equal(copyAnswer.status, 400);
      assert.match(copyAnswer.body.reason, /^replayed/);
      assert.equal(temporal.signalAttempts(), 1, 'the copy signalled nothing');
    });

    it('answers a copy "not yet" (503) when the first it waited for could not be routed, and takes the retry after', async () => {
      const { release, first, send } = await holdFirst('unknown');
      const copy = send();
      release();
      assert.equal((await first).status, 503);
      const copyAnswer = await copy;
      assert.equal(copyAnswer.status, 503);
      assert.match(copyAnswer.body.reason, /could not be routed yet/);
      temporal.absent.delete(KEY);
      const retry = await send();
      assert.equal(retry.status, 202, 'the provider’s next retry is taken');
      assert.equal(temporal.signals.length, 1);
    });

    it('answers a copy "not yet" (503) when the first is held longer than a hold may last, without waiting on', async () => {
      const { rows, release, first, send } = await holdFirst('dispatching', 20);
      const copy = await send();
      assert.equal(copy.status, 503);
      assert.match(copy.body.reason, /still being routed/);
      rows[0] = { status: 'confirmed', holder: runHolder };
      release();
      assert.equal((await first).status, 200);
    });

    it('answers 503 when the action workflow has not started in time, and takes the provider’s retry', async () => {
      temporal.absent.add(KEY);
      const t = withLedger([{ status: 'unknown', holder: runHolder }]);
      const body = event();
      const first = await t.routed.receive(delivery(body, { secret: SECRET }));
      assert.equal(first.status, 503);
      assert.match(first.body.reason, /is unknown and its workflow has not started yet/);
      assert.ok(temporal.signalAttempts() >= 5, `signalled again while waiting (${temporal.signalAttempts()})`);
      temporal.absent.delete(KEY);
      const retry = await t.routed.receive(delivery(body, { secret: SECRET }));
      assert.equal(retry.status, 202, 'the same event, delivered again, is not refused as a replay');
      assert.equal(temporal.signals.length, 1);
    });
  });

  it('marks failure events as failed evidence', async () => {
    await router.receive(delivery(event({ type: 'charge.failed' }), { secret: SECRET }));
    assert.equal(temporal.signals[0].event.outcome, 'failed');
  });
});

describe('webhook server', () => {
  const temporal = fakeTemporal();
  const router = createWebhookRouter({ client: temporal.client, secrets: { payments: [SECRET] } });
  let server: Awaited<ReturnType<typeof startWebhookServer>>;
  before(async () => {
    server = await startWebhookServer(router);
  });
  after(async () => {
    await server.close();
  });

  async function post(path: string, raw: string, signature?: Record<string, string>) {
    const res = await fetch(`${server.url.replace(/\/webhooks$/, '')}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signature },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as { routed: boolean; reason: string } };
  }

  it('serves each provider on /webhooks/<provider> and verifies the bytes as sent', async () => {
    assert.equal(server.urlFor('payments'), `${server.url}/payments`);
    // Odd spacing: the signature covers these exact bytes, not a re-serialization.
    const raw = `{ "id":"evt_http_1",  "type":"charge.succeeded","idempotencyKey":"${KEY}","data":{"id":"ch_1"} }`;
    const signature = webhookHeaders(SECRET, 'evt_http_1', Math.floor(Date.now() / 1000), raw);
    assert.equal((await post('/webhooks/payments', raw, signature)).status, 202);
    assert.equal((await post('/webhooks/payments', raw, signature)).status, 400, 'replayed');
    assert.equal((await post('/webhooks/payments', raw.replace('evt_http_1', 'evt_http_2'))).status, 400, 'unsigned');
    assert.equal((await post('/webhooks', raw, signature)).status, 404, 'no provider named');
    assert.equal((await post('/webhooks/email', raw, signature)).status, 404, 'no secret for this provider');
    const big = JSON.stringify({ pad: 'x'.repeat(300 * 1024) });
    assert.equal(
      (await post('/webhooks/payments', big, webhookHeaders(SECRET, 'evt_big', Math.floor(Date.now() / 1000), big)))
        .status,
      413,
    );
    assert.equal(temporal.signals.length, 1);
  });
});

describe('provider signatures over HTTP: Standard Webhooks with a rotated secret, and Stripe through its SDK', () => {
  const temporal = fakeTemporal();
  const STRIPE_SECRET = `whsec_${'5'.repeat(32)}`;
  let table: Record<string, string[]> = { payments: [SECRET] };
  const router = createWebhookRouter({
    client: temporal.client,
    secrets: () => table,
    verifiers: { stripe: stripeEventVerifier(STRIPE_SECRET) },
  });
  let server: Awaited<ReturnType<typeof startWebhookServer>>;
  before(async () => {
    server = await startWebhookServer(router);
  });
  after(() => server.close());

  const post = async (provider: string, raw: string, headers: Record<string, string>) =>
    (await fetch(server.urlFor(provider), { method: 'POST', headers, body: raw })).status;
  const seconds = () => Math.floor(Date.now() / 1000);

  it('accepts the rotated secret, and refuses an old timestamp, a replayed webhook-id and a tampered body', async () => {
    table = { payments: [NEXT, SECRET] };
    const raw = JSON.stringify(event({ id: 'evt_rotated' }));
    const signed = webhookHeaders(NEXT, 'evt_rotated', seconds(), raw);
    assert.equal(await post('payments', raw, signed), 202, 'signed with the new secret during the rotation');
    assert.equal(await post('payments', raw, webhookHeaders(NEXT, 'evt_rotated', seconds(), raw)), 400, 'replayed');

    const fresh = JSON.stringify(event({ id: 'evt_old' }));
    assert.equal(await post('payments', fresh, webhookHeaders(NEXT, 'evt_old', seconds() - 600, fresh)), 401, 'old');
    const tampered = fresh.replace('ch_1', 'ch_9');
    assert.equal(await post('payments', tampered, webhookHeaders(NEXT, 'evt_old', seconds(), fresh)), 401, 'tampered');
    assert.deepEqual(
      temporal.signals.map((s) => s.event.eventId),
      ['evt_rotated'],
    );
  });

  it('routes a Stripe-signed charge event to the action its metadata names, and refuses a forged one', async () => {
    const charge = { id: 'ch_stripe_1', object: 'charge', metadata: { retrysafe_key: KEY } };
    const raw = JSON.stringify({
      id: 'evt_stripe_1',
      object: 'event',
      type: 'charge.succeeded',
      data: { object: charge },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload: raw, secret: STRIPE_SECRET });
    assert.equal(await post('stripe', raw, { 'stripe-signature': header }), 202);
    const forged = Stripe.webhooks.generateTestHeaderString({ payload: raw, secret: `whsec_${'6'.repeat(32)}` });
    assert.equal(
      await post('stripe', raw.replace('evt_stripe_1', 'evt_stripe_2'), { 'stripe-signature': forged }),
      401,
    );
    assert.equal(await post('stripe', raw, { 'stripe-signature': header }), 400, 'a replayed event ID');
    const routed = temporal.signals.filter((s) => s.event.provider === 'stripe');
    assert.deepEqual(
      routed.map((s) => [s.workflowId, s.event.providerRef, s.event.outcome]),
      [[KEY, 'ch_stripe_1', 'succeeded']],
    );
  });
});
