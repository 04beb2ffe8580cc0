import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { after, before, beforeEach, describe, it, type TestContext } from 'node:test';
import type { CreateTicketIntent, SendEmailIntent } from '../../examples/tools';
import type { ProviderKind } from '../../examples/sandbox-providers/spawn';
import { providerEventSignal, type ActionSnapshot, type ProviderEvent } from '../../messages/action';
import { TRANSIENT_BACKOFF } from '../../policies/timeouts';
import { renderAction } from '../../cli/ops/show';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { createWebhookRouter, startWebhookServer } from '../../workers/webhook-router';
import { webhookHeaders } from '../../workers/webhook-signature';
import { countForKey, countWhere } from '../support/ledger';
import { lineFrom } from '../support/process-output';
import { chargeIntentFor, renewalInput, uniqueEvent } from '../support/renewal-input';
import { sleep, waitForStatus, waitUntil } from '../support/wait';

/**
 * Attacks on the webhook path, end to end: real dev server, provider processes that sign their webhooks
 * with per-run secrets, the router verifying them, a worker process. Every effect is counted at the
 * provider's ledger and every state change in the action's audit trail; log lines are never evidence here.
 */

const TENANT = 'acme';
const ROOT = path.resolve(__dirname, '..', '..');
/**
 * How long a refused or repeated delivery gets to (wrongly) change the action before the test looks. A fixed wait on
 * purpose: these are checks that nothing happened, and a refused delivery leaves no event to wait for.
 */
const NOTHING_HAPPENS_MS = 1_000;

/** Audit entries that changed the status (notes keep it). */
function statusChanges(action: ActionSnapshot): string[] {
  return action.audit.filter((a) => a.from !== a.to).map((a) => `${a.from ?? '∅'}→${a.to}`);
}

function report(t: TestContext, what: string, action: ActionSnapshot): void {
  t.diagnostic(
    `${what}: ${statusChanges(action).join(' ')}; events ${action.events?.length ?? 0}, conflicts ${action.conflicts?.length ?? 0}; ` +
      `checks: ${action.checks.map((c) => `${c.kind}:${c.found ? 'found' : 'empty'}${c.trustworthy ? '' : '(untrusted)'}`).join(', ')}`,
  );
}

interface Posted {
  status: number;
  body: { routed: boolean; key?: string; reason: string };
}

/** POSTs one delivery to a router, signed (or not) as the options say, exactly as a provider would. */
async function deliver(
  url: string,
  event: Record<string, unknown>,
  opts: { secret?: string; t?: number; signature?: Record<string, string> } = {},
): Promise<Posted & { raw: string; signature?: Record<string, string> }> {
  const raw = JSON.stringify(event);
  // The provider's message ID is the event's: a retry of one event carries the same webhook-id.
  const signature =
    opts.signature ??
    (opts.secret === undefined
      ? undefined
      : webhookHeaders(opts.secret, String(event.id), opts.t ?? Math.floor(Date.now() / 1000), raw));
  const posted = await postRaw(url, raw, signature);
  return { ...posted, raw, signature };
}

async function postRaw(url: string, raw: string, signature: Record<string, string> | undefined): Promise<Posted> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signature },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as Posted['body'] };
}

function emailIntent(eventId: string): SendEmailIntent {
  // An approved template: routine contact, sent without a confirmation step.
  return {
    operation: 'send-email',
    to: 'customer@example.com',
    subject: `Your order ${eventId} shipped`,
    body: 'It is on its way.',
    template: 'dispatch-notice',
  };
}

function ticketIntent(externalRef: string): CreateTicketIntent {
  return { operation: 'create-ticket', externalRef, title: 'Card expired', body: 'Follow up.', priority: 'normal' };
}

describe('signed webhooks on a real Temporal server, with payments, email and tickets provider processes', () => {
  let stack: Stack;
  let worker: WorkerProcess;
  const KINDS: ProviderKind[] = ['payments', 'email', 'tickets'];

  before(async () => {
    stack = await startStack({ providerKinds: KINDS });
    worker = await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await stack?.stop();
  });
  beforeEach(async () => {
    if (!worker.alive()) worker = await stack.startWorker({ name: 'steady' });
    await Promise.all(
      KINDS.map(async (kind) => {
        await stack.providers[kind].clearFaults();
        await stack.providers[kind].configure({ readLagMs: 0, webhookDelayMs: 0, ...stack.webhookConfig(kind) });
      }),
    );
  });

  const urlFor = (kind: ProviderKind) => stack.webhookConfig(kind).webhookUrl;
  const secretFor = (kind: ProviderKind) => stack.webhookSecrets[kind][0];

  describe('an email that was never sent, waiting in needs_review', () => {
    let key: string;
    let baseline: ActionSnapshot;

    before(async () => {
      const email = stack.providers.email;
      await email.clearFaults();
      // A reset before commit: nothing is sent, but the executor cannot know that (no key, no lookup).
      await email.setFaults([{ op: 'messages.create', kind: 'reset', times: 1 }]);
      const eventId = uniqueEvent('never-sent');
      ({ key } = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, emailIntent(eventId)));
      baseline = await waitForStatus(stack.retrysafe, key, ['needs_review', 'confirmed', 'failed'], {
        timeoutMs: 40_000,
      });
      assert.equal(baseline.status, 'needs_review', JSON.stringify(baseline.audit));
    });

    async function unchanged(t: TestContext, what: string): Promise<ActionSnapshot> {
      const now = (await stack.retrysafe.getAction(key))!;
      report(t, what, now);
      assert.equal(now.status, 'needs_review');
      assert.deepEqual(statusChanges(now), statusChanges(baseline), 'no status change');
      assert.equal(now.providerRef, undefined);
      const ledger = await stack.providers.email.ledger();
      assert.equal(
        countWhere(ledger, 'messages', (r) => r.reference === key),
        0,
        'no message at the provider',
      );
      assert.deepEqual(
        ledger.requests.filter((r) => r.reference === key).map((r) => r.outcome),
        ['fault:reset'],
        'one POST, reset before commit',
      );
      return now;
    }

    const forgedSent = (id: string) => ({
      id,
      type: 'message.sent',
      reference: key,
      data: { id: 'msg_forged', object: 'message', status: 'queued' },
    });

    it('answers an unsigned "sent" webhook 400 and changes nothing', async (t) => {
      const posted = await deliver(urlFor('email'), forgedSent('evt_forged_unsigned'));
      assert.equal(posted.status, 400, JSON.stringify(posted.body));
      await sleep(NOTHING_HAPPENS_MS);
      const now = await unchanged(t, 'unsigned');
      assert.equal(now.events, undefined, 'the action never heard of it');
    });

    it('answers a forged signature (a guessed secret, or another provider’s) 401 and changes nothing', async (t) => {
      for (const secret of [`whsec_${'ab'.repeat(24)}`, secretFor('payments')]) {
        const posted = await deliver(urlFor('email'), forgedSent(`evt_forged_${secret.length}`), { secret });
        assert.equal(posted.status, 401, JSON.stringify(posted.body));
      }
      await sleep(NOTHING_HAPPENS_MS);
      assert.equal((await unchanged(t, 'forged')).events, undefined);
    });

    it('answers a stale signature (the right secret, six minutes ago) 401 and changes nothing', async (t) => {
      const t0 = Math.floor(Date.now() / 1000) - 360;
      const posted = await deliver(urlFor('email'), forgedSent('evt_stale'), { secret: secretFor('email'), t: t0 });
      assert.equal(posted.status, 401, JSON.stringify(posted.body));
      assert.match(posted.body.reason, /stale/);
      await sleep(NOTHING_HAPPENS_MS);
      assert.equal((await unchanged(t, 'stale')).events, undefined);
    });

    it('a correctly signed "sent" for an email that was never sent is only evidence: it confirms nothing', async (t) => {
      // The strongest forgery: the provider's own secret (a leak, or a provider that lies). The email tool
      // has no lookup, so nothing can verify it; a person decides.
      const posted = await deliver(urlFor('email'), forgedSent('evt_signed_lie'), { secret: secretFor('email') });
      assert.equal(posted.status, 202, JSON.stringify(posted.body));
      // The trusted in-process path (RetrysafeClient.deliverProviderEvent signals the same way) is checked the same.
      const direct: ProviderEvent = {
        eventId: 'evt_in_process',
        type: 'message.sent',
        key,
        providerRef: 'msg_forged',
        outcome: 'succeeded',
      };
      await stack.client.workflow.getHandle(key).signal(providerEventSignal, direct);
      await waitUntil(
        'both events recorded',
        async () => ((await stack.retrysafe.getAction(key))!.events?.length ?? 0) >= 2,
      );
      await sleep(NOTHING_HAPPENS_MS);
      const now = await unchanged(t, 'signed lie');
      assert.deepEqual(
        now.events?.map((e) => e.eventId),
        ['evt_signed_lie', 'evt_in_process'],
      );
      const evidence = now.checks.filter((c) => c.kind === 'evidence');
      assert.equal(evidence.length, 2);
      assert.ok(
        evidence.every((c) => !c.trustworthy),
        JSON.stringify(evidence),
      );
      assert.ok(!now.audit.some((a) => a.to === 'confirmed'));
    });

    it('answers a replayed delivery 400, even re-signed, and changes nothing', async (t) => {
      const first = await deliver(urlFor('email'), forgedSent('evt_replayed'), { secret: secretFor('email') });
      assert.equal(first.status, 202);
      await waitUntil('the first copy is recorded', async () =>
        ((await stack.retrysafe.getAction(key))!.events ?? []).some((e) => e.eventId === 'evt_replayed'),
      );
      const before = (await stack.retrysafe.getAction(key))!;
      const replayed = await postRaw(urlFor('email'), first.raw, first.signature);
      assert.equal(replayed.status, 400, JSON.stringify(replayed.body));
      assert.match(replayed.body.reason, /replayed/);
      const resigned = await deliver(urlFor('email'), forgedSent('evt_replayed'), { secret: secretFor('email') });
      assert.equal(resigned.status, 400);
      await sleep(NOTHING_HAPPENS_MS);
      const now = await unchanged(t, 'replayed');
      assert.equal(now.events?.length, before.events?.length, 'no new event');
      assert.equal(now.checks.length, before.checks.length, 'no new check');
    });

    it('`retrysafe webhooks`, the command a package user runs, routes it from the settings alone and refuses a forgery', async (t) => {
      // The workers' settings (Temporal, the ledger, payload keys) and the router's secrets: nothing else.
      const router = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'cli/main.ts'), 'webhooks', '--port', '0'],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            ...stack.workerEnv,
            LOG_LEVEL: 'info',
            RETRYSAFE_WEBHOOK_SECRETS: JSON.stringify({ email: [secretFor('email')] }),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      try {
        const listening = JSON.parse(await lineFrom(router, /webhook router listening/, 60_000)) as {
          url: string;
          ledger: boolean;
          providers: Array<{ provider: string; secrets: number }>;
        };
        assert.equal(listening.ledger, true, "it reads the workers' ledger");
        assert.deepEqual(listening.providers, [{ provider: 'email', secrets: 1 }], 'names its providers, no secret');
        const url = `${listening.url}/email`;
        const forged = await deliver(url, forgedSent('evt_cli_forged'), { secret: secretFor('payments') });
        assert.equal(forged.status, 401, JSON.stringify(forged.body));
        const signed = await deliver(url, forgedSent('evt_cli_signed'), { secret: secretFor('email') });
        assert.equal(signed.status, 202, JSON.stringify(signed.body));
        assert.equal(signed.body.key, key);
        // A query may time out on a loaded machine (the worker answers it); the next poll asks again.
        await waitUntil('the command-routed event is recorded', async () =>
          ((await stack.retrysafe.getAction(key).catch(() => undefined))?.events ?? []).some(
            (e) => e.eventId === 'evt_cli_signed',
          ),
        );
        const now = await unchanged(t, 'through retrysafe webhooks');
        assert.ok(!now.events!.some((e) => e.eventId === 'evt_cli_forged'), 'the forgery never reached the action');
      } finally {
        // A router that failed to start has exited already: its output is in the error above.
        if (router.exitCode === null && router.signalCode === null) {
          const exited = once(router, 'exit');
          router.kill('SIGTERM');
          const [code] = (await exited) as [number | null];
          assert.equal(code, 0, 'SIGTERM stops it cleanly');
        }
      }
    });
  });

  it('rotation: the old and the new secret are both accepted, then the retired one is refused', async (t) => {
    const payments = stack.providers.payments;
    await payments.reset();
    const OLD = `whsec_${Buffer.from('rotation-old-0123456789abcdef-012').toString('base64')}`;
    const NEW = `whsec_${Buffer.from('rotation-new-0123456789abcdef-012').toString('base64')}`;
    let table: Record<string, string[]> = { payments: [OLD] };
    const router = await startWebhookServer(createWebhookRouter({ client: stack.client, secrets: () => table }));
    try {
      const chargeWith = async (providerSecret: string) => {
        await payments.configure({ webhookUrl: router.urlFor('payments'), webhookSecret: providerSecret });
        const eventId = uniqueEvent('rotation');
        const { key } = await stack.retrysafe.claimAction(
          { tenant: TENANT, eventId },
          chargeIntentFor(renewalInput(eventId)),
        );
        await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed'], { timeoutMs: 20_000 });
        const before = (await payments.ledger()).webhooks.length;
        // Wait until the provider is done with this charge's webhook: delivered, or refused after every retry.
        let delivery: { delivered: boolean; attempts: number; lastError?: string } | undefined;
        await waitUntil('the webhook settled', async () => {
          const hooks = (await payments.ledger()).webhooks;
          delivery = hooks.at(-1);
          return hooks.length >= before && !!delivery && (delivery.delivered || delivery.attempts >= 4);
        });
        if (delivery!.delivered) {
          // Accepted: the router signalled the action; wait for the event to be recorded there.
          await waitUntil(`the delivered webhook recorded on ${key}`, async () =>
            Boolean((await stack.retrysafe.getAction(key))?.events?.length),
          );
        } else {
          // Refused: nothing may reach the action, which only a fixed wait can check.
          await sleep(NOTHING_HAPPENS_MS);
        }
        return { key, delivery: delivery!, action: (await stack.retrysafe.getAction(key))! };
      };

      const before = await chargeWith(OLD);
      table = { payments: [NEW, OLD] };
      const rotatingOld = await chargeWith(OLD);
      const rotatingNew = await chargeWith(NEW);
      table = { payments: [NEW] };
      const retired = await chargeWith(OLD);
      const after = await chargeWith(NEW);

      for (const [name, c] of Object.entries({ before, rotatingOld, rotatingNew, after })) {
        report(t, name, c.action);
        assert.equal(c.delivery.delivered, true, `${name}: ${JSON.stringify(c.delivery)}`);
        assert.equal(c.action.events?.length, 1, `${name}: the event reached its action`);
        assert.equal(c.action.events?.[0].providerRef, c.action.providerRef);
      }
      report(t, 'retired', retired.action);
      assert.equal(retired.delivery.delivered, false, 'the retired secret is refused');
      assert.equal(retired.delivery.attempts, 4, 'refused on the first try and on each of 3 retries');
      assert.match(retired.delivery.lastError ?? '', /401/);
      assert.equal(retired.action.events, undefined, 'a refused event never reaches the action');

      const ledger = await payments.ledger();
      for (const c of [before, rotatingOld, rotatingNew, retired, after]) {
        assert.deepEqual(countForKey(ledger, c.key), { records: 1, requests: 1, committed: 1, replayed: 0 });
        assert.deepEqual(statusChanges(c.action), ['∅→planned', 'planned→dispatching', 'dispatching→confirmed']);
      }
    } finally {
      await payments.configure(stack.webhookConfig('payments'));
      await router.close();
    }
  });

  it('a webhook storm changes state once: 50 interleaved succeeded/failed copies, and 50 more signalled directly', async (t) => {
    const payments = stack.providers.payments;
    // The provider's own webhook is off: the storm below is the only evidence.
    await payments.configure({ webhookUrl: null });
    // One committed charge whose reply is lost, then resets until the executor gives up: the action is unknown.
    await payments.setFaults([
      { op: 'charges.create', kind: 'delay', delayMs: 1, times: 1 },
      { op: 'charges.create', kind: 'drop-after-commit', times: 1 },
      { op: 'charges.create', kind: 'reset', times: TRANSIENT_BACKOFF.maxTries - 1 },
    ]);
    const eventId = uniqueEvent('storm');
    const { key } = await stack.retrysafe.claimAction(
      { tenant: TENANT, eventId },
      chargeIntentFor(renewalInput(eventId)),
    );
    await waitForStatus(stack.retrysafe, key, ['unknown', 'confirmed', 'failed', 'needs_review'], {
      timeoutMs: 45_000,
    });
    const ledgerBefore = await payments.ledger();
    const chargeId = (ledgerBefore.records.charges ?? []).find(
      (r) => (r as { idempotencyKey?: string }).idempotencyKey === key,
    )?.id;
    assert.ok(chargeId, 'the provider committed the charge');
    const requestsBefore = countForKey(ledgerBefore, key).requests;

    const succeeded = {
      id: `evt_storm_ok_${eventId}`,
      type: 'charge.succeeded',
      idempotencyKey: key,
      data: { id: chargeId },
    };
    const failed = {
      id: `evt_storm_fail_${eventId}`,
      type: 'charge.failed',
      idempotencyKey: key,
      data: { id: chargeId },
    };
    // S F S S F S S F …: every failed copy follows a succeeded one and is followed by one.
    const order = Array.from({ length: 50 }, (_, i) => (i % 3 === 1 ? failed : succeeded));
    const answers = await Promise.all(
      order.map((e) => deliver(urlFor('payments'), e, { secret: secretFor('payments') })),
    );
    const byStatus = answers.reduce<Record<number, number>>(
      (acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }),
      {},
    );
    t.diagnostic(`router answers: ${JSON.stringify(byStatus)}`);
    assert.deepEqual(
      byStatus,
      { 202: 2, 400: 48 },
      'each event ID accepted once, every copy after it refused as a replay',
    );

    // A router that lost its memory (restarted, or a second replica) would pass the copies on: the action
    // itself must change state once too.
    const asSignal = (e: typeof succeeded): ProviderEvent => ({
      eventId: e.id,
      type: e.type,
      key,
      providerRef: chargeId,
      outcome: e === failed ? 'failed' : 'succeeded',
    });
    const handle = stack.client.workflow.getHandle(key);
    await Promise.all(order.map((e) => handle.signal(providerEventSignal, asSignal(e))));

    const confirmed = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 30_000,
    });
    // A late copy of each, after the outcome, through the memory-less path: still nothing changes.
    await Promise.all([succeeded, failed].map((e) => handle.signal(providerEventSignal, asSignal(e))));
    // Fixed, as above: the late copies must change nothing (kept at the 2 s this check always had).
    await sleep(2 * NOTHING_HAPPENS_MS);
    const action = (await stack.retrysafe.getAction(key))!;
    report(t, 'storm', action);

    assert.equal(confirmed.status, 'confirmed', JSON.stringify(confirmed.audit));
    const changes = statusChanges(action);
    assert.deepEqual(
      changes.slice(changes.indexOf('dispatching→unknown') + 1),
      ['unknown→confirmed'],
      'exactly one state change',
    );
    assert.equal(action.status, 'confirmed');
    assert.equal(action.providerRef, chargeId);
    const ledgerAfter = await payments.ledger();
    const counts = countForKey(ledgerAfter, key);
    assert.equal(counts.records, 1, 'one charge at the provider');
    assert.equal(counts.committed, 1);
    assert.equal(counts.requests, requestsBefore, 'no request to the provider after the storm');
    // The two IDs race each other through the router, so they may be held in either order.
    assert.deepEqual(
      action.events?.map((e) => e.eventId).sort(),
      [succeeded.id, failed.id].sort(),
      'one event per ID, however many copies',
    );
    assert.ok(
      action.checks.some((c) => c.kind === 'lookup' && c.found),
      'a lookup confirmed it',
    );
    assert.deepEqual(
      action.conflicts?.map((c) => [c.eventId, c.outcome]),
      [[failed.id, 'failed']],
      'the failed event is kept as a conflict for a person',
    );
    assert.match(action.conflicts![0].reason, /says it failed, but the action is confirmed/);
    const shown = renderAction(action);
    assert.match(shown, /Conflicts/);
    assert.ok(shown.includes(failed.id), shown);
  });

  it('a succeeded event for a lookup tool confirms only after the lookup agrees (the genuine webhook comes first)', async (t) => {
    const payments = stack.providers.payments;
    // The charge commits and its reply is lost; every retry is reset, so the executor ends unknown. The
    // provider's signed charge.succeeded webhook arrives at once, long before the contract's 2 s lag is over.
    await payments.setFaults([
      { op: 'charges.create', kind: 'delay', delayMs: 1, times: 1 },
      { op: 'charges.create', kind: 'drop-after-commit', times: 1 },
      { op: 'charges.create', kind: 'reset', times: TRANSIENT_BACKOFF.maxTries - 1 },
    ]);
    const eventId = uniqueEvent('event-first');
    const { key } = await stack.retrysafe.claimAction(
      { tenant: TENANT, eventId },
      chargeIntentFor(renewalInput(eventId)),
    );
    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 45_000,
    });
    report(t, 'charge', action);
    const ledger = await payments.ledger();
    const counts = countForKey(ledger, key);
    assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
    assert.equal(counts.records, 1, 'one charge');
    assert.equal(counts.committed, 1);
    assert.ok(
      ledger.webhooks.some((w) => w.type === 'charge.succeeded' && w.delivered),
      'the webhook was delivered',
    );
    assert.equal(action.events?.length, 1, 'the webhook reached the action');
    assert.ok(
      Date.parse(action.events![0].receivedAt!) < Date.parse(action.audit.find((a) => a.to === 'unknown')!.at),
      'the event was there before the executor gave up',
    );

    const unknownAt = Date.parse(action.audit.find((a) => a.to === 'unknown')!.at);
    const confirmedEntry = action.audit.find((a) => a.to === 'confirmed')!;
    assert.match(confirmedEntry.reason, /^lookup found ch_\d+, as provider event charge\.succeeded/);
    assert.ok(
      Date.parse(confirmedEntry.at) - unknownAt >= 1_950,
      `confirmed after the 2 s lag and a lookup, not on the event (${Date.parse(confirmedEntry.at) - unknownAt} ms)`,
    );
    const lookupAt = action.checks.findIndex((c) => c.kind === 'lookup' && c.found);
    const evidenceAt = action.checks.findIndex((c) => c.kind === 'evidence');
    assert.ok(lookupAt >= 0 && evidenceAt > lookupAt, `the lookup came first: ${JSON.stringify(action.checks)}`);
    assert.ok(action.checks[evidenceAt].trustworthy);
    assert.match(action.checks[evidenceAt].detail ?? '', /a lookup agrees/);
    assert.deepEqual(action.conflicts, []);
  });

  it('a signed succeeded event for a charge that never committed confirms nothing; the lookup decides', async (t) => {
    const payments = stack.providers.payments;
    await payments.configure({ webhookUrl: null });
    // Every try is reset before commit: nothing is charged, and the executor ends unknown.
    await payments.setFaults([{ op: 'charges.create', kind: 'reset', times: TRANSIENT_BACKOFF.maxTries }]);
    const eventId = uniqueEvent('forged-charge');
    const { key } = await stack.retrysafe.claimAction(
      { tenant: TENANT, eventId },
      chargeIntentFor(renewalInput(eventId)),
    );
    const unknown = await waitForStatus(stack.retrysafe, key, ['unknown', 'confirmed', 'failed'], {
      timeoutMs: 45_000,
    });
    assert.equal(unknown.status, 'unknown');
    assert.equal(countForKey(await payments.ledger(), key).records, 0);
    const forged = {
      id: `evt_forged_${eventId}`,
      type: 'charge.succeeded',
      idempotencyKey: key,
      data: { id: 'ch_forged' },
    };
    const posted = await deliver(urlFor('payments'), forged, { secret: secretFor('payments') });
    assert.equal(posted.status, 202, 'signed, so it is evidence; not proof');

    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 45_000,
    });
    report(t, 'forged charge', action);
    const ledger = await payments.ledger();
    const charges = (ledger.records.charges ?? []).filter(
      (r) => (r as { idempotencyKey?: string }).idempotencyKey === key,
    );
    assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
    assert.equal(charges.length, 1, 'one charge, sent after the lookup proved absence, with the same key');
    assert.equal(action.providerRef, charges[0].id);
    assert.notEqual(action.providerRef, 'ch_forged');
    assert.deepEqual(statusChanges(action), [
      '∅→planned',
      'planned→dispatching',
      'dispatching→unknown',
      'unknown→dispatching',
      'dispatching→confirmed',
    ]);
    assert.ok(!action.audit.some((a) => /provider event/.test(a.reason) && a.to === 'confirmed'));
    const lookup = action.checks.find((c) => c.kind === 'lookup');
    assert.equal(lookup?.found, false, 'the lookup after the lag found nothing');
    assert.deepEqual(
      action.conflicts?.map((c) => c.eventId),
      [forged.id],
    );
    assert.match(action.conflicts![0].reason, /lookup after the read-after-write lag found nothing/);
  });

  it('never routes a ticket event by a reference two tenants share, and routes a tenant-scoped one only to that tenant', async (t) => {
    const tickets = stack.providers.tickets;
    // Both tickets commit at once, their replies are held 4 s, so both actions are open when the webhooks come.
    await tickets.configure({ webhookDelayMs: 500 });
    await tickets.setFaults([{ op: 'tickets.create', kind: 'hold-after-commit', delayMs: 4_000, times: 2 }]);
    const ref = `TK-shared-${uniqueEvent('ref')}`.slice(0, 80);
    const [acme, globex] = await Promise.all(
      ['acme', 'globex'].map((tenant) =>
        stack.retrysafe.claimAction({ tenant, eventId: uniqueEvent(`shared-${tenant}`) }, ticketIntent(ref)),
      ),
    );
    await waitUntil('both webhooks answered', async () => {
      const hooks = (await tickets.ledger()).webhooks.filter((w) => w.type === 'ticket.created');
      return hooks.length >= 2 && hooks.slice(-2).every((w) => w.delivered || w.attempts >= 4);
    });
    const mid = await Promise.all([acme.key, globex.key].map(async (k) => (await stack.retrysafe.getAction(k))!));
    for (const a of mid) assert.equal(a.events, undefined, `${a.key} got no event for a shared reference`);

    // A provider that knows the tenant (a connected account) names it: the router then picks that tenant only.
    const scoped = {
      id: `evt_scoped_${ref}`,
      type: 'ticket.created',
      reference: ref,
      tenant: 'acme',
      data: { id: 'tk_scoped' },
    };
    const posted = await deliver(urlFor('tickets'), scoped, { secret: secretFor('tickets') });
    assert.equal(posted.status, 202, JSON.stringify(posted.body));
    assert.equal(posted.body.key, acme.key);
    const unscoped = { id: `evt_unscoped_${ref}`, type: 'ticket.created', reference: ref, data: { id: 'tk_x' } };
    const refused = await deliver(urlFor('tickets'), unscoped, { secret: secretFor('tickets') });
    assert.equal(refused.body.routed, false);
    assert.match(refused.body.reason, /actions of tenants acme, globex; refusing to guess/);

    const [a, g] = await Promise.all(
      [acme.key, globex.key].map((k) =>
        waitForStatus(stack.retrysafe, k, ['confirmed', 'failed', 'needs_review'], { timeoutMs: 30_000 }),
      ),
    );
    report(t, 'acme', a);
    report(t, 'globex', g);
    for (const x of [a, g]) {
      assert.deepEqual(statusChanges(x), ['∅→planned', 'planned→dispatching', 'dispatching→confirmed']);
      assert.match(x.providerRef ?? '', /^tk_/);
    }
    assert.deepEqual(
      a.events?.map((e) => e.eventId),
      [scoped.id],
    );
    assert.equal(g.events, undefined, 'nothing of either tenant reached the other');
    assert.equal(
      countWhere(await tickets.ledger(), 'tickets', (r) => r.externalRef === ref),
      2,
      'two tickets, one per tenant',
    );
  });
});
