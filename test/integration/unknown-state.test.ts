import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, type TestContext } from 'node:test';
import type { SendEmailIntent } from '../../examples/tools';
import { ticketIntent } from '../support/intents';
import { TRANSIENT_BACKOFF } from '../../policies/timeouts';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  operatorScopesOf,
  submitApproval,
} from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import type { Ledger } from '../../examples/sandbox-providers/spawn';
import type { ActionSnapshot } from '../../messages/action';
import { countForKey } from '../support/ledger';
import { chargeIntentFor, renewalInput, uniqueEvent } from '../support/renewal-input';
import { sleep, waitForStatus, waitUntil } from '../support/wait';

/**
 * Lost replies and unknown outcomes, end to end: real dev server, provider processes, webhook router and a
 * worker process. Every count is taken at the provider's ledger, never from the action's own bookkeeping.
 */

const TENANT = 'acme';
/**
 * How long an action in needs_review is watched for a resend. A fixed wait on purpose: it checks that nothing
 * happens, and no event can show that. It is two RECONCILE_INTERVALs (5 s): a reconciliation or retry loop still
 * running in review would have sent again.
 */
const QUIET_IN_REVIEW_MS = 10_000;
/** Emails reach customers, so the decision table asks for a signed approval of each one (customer-message.confirm). */
const APPROVAL_KEYS = generateApprovalKeyPair();
const APPROVER_TOKEN = 'unknown-state-test-approver-token';
const approvals = createApprovalSigner({
  privateKeyHex: APPROVAL_KEYS.privateKeyHex,
  keyId: APPROVAL_KEYS.keyId,
  operators: [
    { name: 'bob', tokenSha256: hashOperatorToken(APPROVER_TOKEN), tenants: [TENANT], roles: ['approver', 'resolver'] },
  ],
});
const bob = approvals.authenticate(APPROVER_TOKEN)!;
const WORKER_ENV = {
  RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [APPROVAL_KEYS.keyId]: APPROVAL_KEYS.publicKeyHex }),
  RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(approvals.operators)),
};

function emailIntent(eventId: string): SendEmailIntent {
  return {
    operation: 'send-email',
    to: 'customer@example.com',
    subject: `Your renewal ${eventId}`,
    body: 'Thanks for renewing.',
  };
}

/** What the provider saw for one reference: records it holds and POSTs it received, by outcome. */
function atProvider(ledger: Ledger, collection: string, field: string, value: string) {
  const records = (ledger.records[collection] ?? []).filter((r) => (r as Record<string, unknown>)[field] === value);
  const requests = ledger.requests.filter((r) => r.reference === value || r.idempotencyKey === value);
  return {
    records,
    requests: requests.length,
    committed: requests.filter((r) => r.outcome === 'committed').length,
    faulted: requests.filter((r) => r.outcome.startsWith('fault:')).length,
    outcomes: requests.map((r) => r.outcome),
  };
}

/** The one line per scenario the report quotes: POSTs counted at the provider against the expected count. */
function report(
  t: TestContext,
  sends: { counted: number; expected: number; effects: number },
  action: ActionSnapshot,
): void {
  const path = action.audit.map((a) => `${a.to}${a.by ? `[${a.by}]` : ''}`).join(' > ');
  const checks = action.checks.map((c) => `${c.kind}:${c.found ? 'found' : 'empty'}`).join(', ') || 'none';
  t.diagnostic(
    `sends at the provider: ${sends.counted} (expected ${sends.expected}); effects: ${sends.effects}; action.sends ${action.sends}, ` +
      `dispatches ${action.dispatches}; ${path}; checks: ${checks}; last: ${action.audit.at(-1)?.reason ?? ''}`,
  );
}

describe('unknown outcomes on a real Temporal server with payments, email and tickets provider processes', () => {
  let stack: Stack;
  let worker: WorkerProcess;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments', 'email', 'tickets'] });
    worker = await stack.startWorker({ name: 'steady', env: WORKER_ENV });
  });
  after(async () => {
    await stack?.stop();
  });
  beforeEach(async () => {
    if (!worker.alive()) worker = await stack.startWorker({ name: 'steady', env: WORKER_ENV });
    await Promise.all(
      (['payments', 'email', 'tickets'] as const).map(async (kind) => {
        await stack.providers[kind].clearFaults();
        await stack.providers[kind].configure({ readLagMs: 0, ...stack.webhookConfig(kind), webhookDelayMs: 0 });
      }),
    );
  });

  /** Claims an email action and approves its exact request as operator bob, so that it is dispatched. */
  async function claimApprovedEmail(eventId: string): Promise<string> {
    const claimed = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, emailIntent(eventId));
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, [
      'awaiting_confirmation',
      'dispatching',
      'unknown',
      'needs_review',
      'confirmed',
      'failed',
    ]);
    assert.equal(waiting.status, 'awaiting_confirmation', 'an email waits for a signed approval');
    const operator = approvals.authenticate(APPROVER_TOKEN)!;
    const outcome = await submitApproval(
      stack.client,
      approvals.sign(operator, { key: claimed.key, requestHash: claimed.requestHash, decision: 'approve' }),
    );
    assert.equal(outcome.approver, 'bob');
    return claimed.key;
  }

  /** Claims a ticket whose reply the provider drops after committing, with the given read lag, and waits for an outcome. */
  async function ticketWithLostReply(prefix: string, readLagMs: number) {
    const tickets = stack.providers.tickets;
    await tickets.configure({ readLagMs });
    await tickets.setFaults([{ op: 'tickets.create', kind: 'drop-after-commit', times: 1 }]);
    const eventId = uniqueEvent(prefix);
    const intent = ticketIntent(eventId);
    const { key } = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, intent);
    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 30_000,
    });
    const seen = atProvider(await tickets.ledger(), 'tickets', 'externalRef', intent.externalRef);
    return { action, seen };
  }

  it('confirms a ticket whose reply was lost from a lookup that lags less than the contract says, without resending', async (t) => {
    const { action, seen } = await ticketWithLostReply('lost-reply-lagging-lookup', 1500);
    report(t, { counted: seen.requests, expected: 1, effects: seen.records.length }, action);
    assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
    assert.equal(seen.records.length, 1, 'exactly one ticket with this externalRef');
    assert.equal(action.providerRef, seen.records[0].id);
    assert.deepEqual(
      [seen.requests, seen.committed],
      [1, 1],
      `one POST, committed (outcomes ${seen.outcomes.join(', ')})`,
    );
    assert.equal(action.sends, 1);
    assert.match(action.audit.at(-1)!.reason, /lookup/, 'confirmed by the lookup after the lost reply');
  });

  it('sends once more when the lookup proves absence after a reset that committed nothing', async (t) => {
    const tickets = stack.providers.tickets;
    await tickets.setFaults([{ op: 'tickets.create', kind: 'reset', times: 1 }]);
    const eventId = uniqueEvent('reset-absent');
    const intent = ticketIntent(eventId);

    const { key } = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, intent);
    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 30_000,
    });

    const seen = atProvider(await tickets.ledger(), 'tickets', 'externalRef', intent.externalRef);
    report(t, { counted: seen.requests, expected: 2, effects: seen.records.length }, action);
    assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
    assert.equal(seen.records.length, 1, 'exactly one ticket');
    assert.equal(action.providerRef, seen.records[0].id);
    assert.deepEqual(
      seen.outcomes,
      ['fault:reset', 'committed'],
      'the reset POST, then one POST after the lookup proved absence',
    );
    assert.equal(action.sends, 2);
  });

  it('puts an email with a lost reply in needs_review, never sends it again, and takes an operator resolution', async (t) => {
    const email = stack.providers.email;
    await email.configure({ webhookUrl: null });
    await email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    const eventId = uniqueEvent('email-lost-reply');

    const key = await claimApprovedEmail(eventId);
    const review = await waitForStatus(stack.retrysafe, key, ['needs_review', 'confirmed', 'failed'], {
      timeoutMs: 30_000,
    });
    assert.equal(review.status, 'needs_review', JSON.stringify(review.audit));
    assert.ok(
      review.audit.some((a) => a.to === 'unknown'),
      'it went through unknown first',
    );
    let seen = atProvider(await email.ledger(), 'messages', 'reference', key);
    assert.deepEqual([seen.records.length, seen.requests], [1, 1], 'one message, one POST');

    await sleep(QUIET_IN_REVIEW_MS);
    const still = await stack.retrysafe.getAction(key);
    seen = atProvider(await email.ledger(), 'messages', 'reference', key);
    assert.ok(still);
    assert.equal(still.status, 'needs_review', 'nothing resolved it in the meantime');
    assert.deepEqual([seen.records.length, seen.requests], [1, 1], 'no second send while waiting for review');
    assert.equal(still.sends, 1);

    const messageId = seen.records[0].id;
    assert.match(messageId, /^msg_/);
    await stack.retrysafe.resolveAction(
      approvals.sign(bob, {
        decision: 'resolve',
        key,
        requestHash: still.requestHash,
        params: { outcome: 'confirmed', reason: 'seen in the provider dashboard', providerRef: messageId },
      }),
    );
    const action = await waitForStatus(stack.retrysafe, key, 'confirmed', { timeoutMs: 15_000 });
    seen = atProvider(await email.ledger(), 'messages', 'reference', key);
    report(t, { counted: seen.requests, expected: 1, effects: seen.records.length }, action);
    assert.equal(action.providerRef, messageId);
    assert.equal(action.audit.at(-1)?.by, 'bob', 'the operator named in the signed envelope');
    assert.equal(action.audit.at(-1)?.to, 'confirmed');
    assert.deepEqual([seen.records.length, seen.requests], [1, 1], 'still one message');
  });

  it('confirms a charge whose provider webhook arrived before any lookup, once a lookup agrees', async (t) => {
    const payments = stack.providers.payments;
    // One committed request whose reply is lost, then every retry inside the attempt reset before commit:
    // the executor runs out of tries (TRANSIENT_BACKOFF.maxTries) and reports unknown. A request takes the
    // oldest armed before-commit fault, so the 1 ms delay goes first: it uses up the first request's
    // before-commit slot, which lets that request commit and lose its reply instead of being reset.
    await payments.setFaults([
      { op: 'charges.create', kind: 'delay', delayMs: 1, times: 1 },
      { op: 'charges.create', kind: 'drop-after-commit', times: 1 },
      { op: 'charges.create', kind: 'reset', times: TRANSIENT_BACKOFF.maxTries + 2 },
    ]);
    const eventId = uniqueEvent('webhook-first');
    const intent = chargeIntentFor(renewalInput(eventId));

    const { key } = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, intent);
    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 45_000,
    });

    const ledger = await payments.ledger();
    const counts = countForKey(ledger, key);
    const charges = (ledger.records.charges ?? []).filter(
      (r) => (r as { idempotencyKey?: string }).idempotencyKey === key,
    );
    report(t, { counted: counts.requests, expected: TRANSIENT_BACKOFF.maxTries, effects: counts.records }, action);
    assert.equal(action.status, 'confirmed', JSON.stringify({ audit: action.audit, checks: action.checks }));
    assert.ok(
      action.audit.some((a) => a.to === 'unknown'),
      'the executor ended unknown',
    );
    assert.equal(counts.records, 1, 'exactly one charge for the key');
    assert.equal(counts.committed, 1);
    const outcomes = ledger.requests.filter((r) => r.idempotencyKey === key).map((r) => r.outcome);
    const resets: string[] = Array.from({ length: TRANSIENT_BACKOFF.maxTries - 1 }, () => 'fault:reset');
    assert.deepEqual(
      outcomes,
      ['committed', ...resets],
      'one committed POST whose reply was lost, then resets until the tries ran out',
    );
    assert.equal(action.sends, TRANSIENT_BACKOFF.maxTries);
    assert.equal(action.providerRef, charges[0].id);
    assert.ok(
      action.checks.some((c) => c.kind === 'evidence' && c.found && c.trustworthy),
      `an evidence check: ${JSON.stringify(action.checks)}`,
    );
    // The webhook is evidence, not proof: it confirms once a lookup after the lag agrees.
    assert.ok(
      action.checks.some((c) => c.kind === 'lookup' && c.found),
      `a lookup check: ${JSON.stringify(action.checks)}`,
    );
    assert.match(action.audit.at(-1)!.reason, /lookup found .*as provider event charge\.succeeded/);
    assert.ok(
      ledger.webhooks.some((w) => w.type === 'charge.succeeded' && w.delivered),
      'the webhook was delivered to the router',
    );
  });

  it('keeps an email in needs_review when its late message.sent webhook arrives: evidence for a person, not proof', async (t) => {
    const email = stack.providers.email;
    await email.configure({ webhookDelayMs: 15_000 });
    await email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    const eventId = uniqueEvent('late-webhook');

    const key = await claimApprovedEmail(eventId);
    const review = await waitForStatus(stack.retrysafe, key, ['needs_review', 'confirmed', 'failed'], {
      timeoutMs: 30_000,
    });
    assert.equal(
      review.status,
      'needs_review',
      `needs_review before the webhook arrives: ${JSON.stringify(review.audit)}`,
    );
    assert.ok(!(await email.ledger()).webhooks.some((w) => w.delivered), 'the webhook is still held back');

    // The email tool has no lookup: nothing can verify the event, so it is recorded and a person decides.
    const deadline = Date.now() + 30_000;
    let action = review;
    while (!action.events?.length) {
      assert.ok(Date.now() < deadline, 'the webhook reached the action');
      await sleep(250);
      action = (await stack.retrysafe.getAction(key))!;
    }
    // The event is recorded when the signal lands; the action's decision on it follows. Once that decision is on
    // record the review is back to waiting for a person, so nothing else can move it.
    await waitUntil('the action to decide on the late message.sent', async () =>
      ((await stack.retrysafe.getAction(key))?.audit ?? []).some((a) =>
        /message\.sent .*a person decides/.test(a.reason),
      ),
    );
    action = (await stack.retrysafe.getAction(key))!;
    const seen = atProvider(await email.ledger(), 'messages', 'reference', key);
    report(t, { counted: seen.requests, expected: 1, effects: seen.records.length }, action);
    assert.equal(action.status, 'needs_review');
    assert.equal(action.providerRef, undefined);
    assert.equal(action.events?.[0].type, 'message.sent');
    assert.equal(action.events?.[0].providerRef, seen.records[0]?.id, 'the event names the message the provider holds');
    const evidence = action.checks.filter((c) => c.kind === 'evidence');
    assert.equal(evidence.length, 1);
    assert.equal(evidence[0].trustworthy, false);
    assert.match(action.audit.at(-1)!.reason, /message\.sent .*a person decides/);
    assert.deepEqual([seen.records.length, seen.requests], [1, 1], 'exactly one message, one POST');
  });

  it('does not take an empty lookup inside the contract lag as absence', async (t) => {
    const { action, seen } = await ticketWithLostReply('empty-inside-lag', 2500);
    report(t, { counted: seen.requests, expected: 1, effects: seen.records.length }, action);
    assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
    assert.equal(seen.records.length, 1, 'exactly one ticket: a resend after the first empty lookup would make two');
    assert.deepEqual([seen.requests, seen.committed], [1, 1]);
    assert.equal(action.providerRef, seen.records[0].id);
    assert.equal(action.sends, 1);
  });

  it('reports actions left in needs_review when a new worker process starts', async (t) => {
    const email = stack.providers.email;
    await email.configure({ webhookUrl: null });
    await email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    const eventId = uniqueEvent('recovery');
    const key = await claimApprovedEmail(eventId);
    const review = await waitForStatus(stack.retrysafe, key, ['needs_review', 'confirmed', 'failed'], {
      timeoutMs: 30_000,
    });
    assert.equal(review.status, 'needs_review');
    // The report reads visibility; wait until the status search attribute is listed.
    const deadline = Date.now() + 10_000;
    while (!(await stack.retrysafe.listActions({ status: 'needs_review' })).some((a) => a.key === key)) {
      assert.ok(Date.now() < deadline, 'the action is listed as needs_review');
      await sleep(200);
    }

    const restarted = await stack.startWorker({ name: 'restarted', env: WORKER_ENV });
    try {
      // The report goes through pino, whose writes may land just after the worker's ready line.
      const reportLine = () =>
        restarted
          .output()
          .split('\n')
          .find((l) => /recovery: \d+ incomplete actions/.test(l));
      const until = Date.now() + 5_000;
      while (!reportLine() && Date.now() < until) await sleep(100);
      const line = reportLine();
      assert.ok(line, `the new worker logs its recovery report:\n${restarted.output().slice(-4000)}`);
      const logged = JSON.parse(line) as {
        level: number;
        msg: string;
        byStatus: Record<string, number>;
        keys: Array<{ key: string; status: string }>;
      };
      assert.ok((logged.byStatus.needs_review ?? 0) >= 1, `needs_review counted: ${line}`);
      assert.ok(
        logged.keys.some((k) => k.key === key && k.status === 'needs_review'),
        `the action is named: ${line}`,
      );
      const seen = atProvider(await email.ledger(), 'messages', 'reference', key);
      report(t, { counted: seen.requests, expected: 1, effects: seen.records.length }, review);
      assert.deepEqual([seen.records.length, seen.requests], [1, 1], 'a new worker does not resend it either');
    } finally {
      await restarted.stop();
    }
  });
});
