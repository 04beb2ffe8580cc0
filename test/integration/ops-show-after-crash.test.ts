import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ActionSnapshot } from '../../messages/action';
import { actionKeyForStep } from '../../policies/action-key';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { acmeCharge } from '../support/intents';
import { countForKey } from '../support/ledger';
import { runOpsProcess } from '../support/ops-process';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus } from '../support/wait';

/**
 * `retrysafe ops show` after a worker is SIGKILLed past commit: the provider took the request, the worker died before
 * it kept the reply. What the operator reads must not understate what reached the provider (counted there, the ground
 * truth): a request the record shows possible and nothing recorded is counted as such, the audit trail has the first
 * dispatch when it happened and each entry once, and its reasons name a run's act without a doubled `run:` prefix.
 */
describe('ops show after a SIGKILL past commit', () => {
  let stack: Stack;
  let worker: WorkerProcess | undefined;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments', 'inventory', 'shipping', 'email'] });
  });
  after(async () => {
    await stack?.stop();
  });

  /** Starts a worker that kills itself past the commit of `operation`, runs `start`, and brings up its successor. */
  async function crashPastCommit<T>(operation: string, start: () => Promise<T>): Promise<T> {
    if (worker?.alive()) await worker.stop();
    const doomed = await stack.startWorker({ name: `doomed-${operation}`, crashAt: `after-commit:${operation}` });
    const started = await start();
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    worker = await stack.startWorker({ name: `successor-${operation}` });
    return started;
  }

  async function show(key: string): Promise<{ text: string; json: ActionSnapshot }> {
    const text = await runOpsProcess(stack, ['show', key]);
    assert.equal(text.code, 0, text.stderr);
    const json = await runOpsProcess(stack, ['show', key, '--json']);
    assert.equal(json.code, 0, json.stderr);
    return { text: text.stdout, json: JSON.parse(json.stdout) as ActionSnapshot };
  }

  it('a key-less email: the request the dead attempt made is counted as possibly sent, unrecorded', async () => {
    const run = await crashPastCommit('send-email', () =>
      stack.retrysafe.startRenewal(renewalInput(uniqueEvent('show-email'), { customerEmail: 'pat@example.com' })),
    );
    const key = actionKeyForStep(run.workflowId, { operation: 'send-email', version: 1, stepId: 'receipt' });
    await waitForStatus(stack.retrysafe, key, 'needs_review', { timeoutMs: 90_000 });
    const sent = (await stack.providers.email.ledger()).requests.filter((r) => r.reference === key);
    assert.deepEqual(
      sent.map((r) => r.outcome),
      ['committed'],
      'one email reached the provider, never again',
    );

    const { text, json } = await show(key);
    assert.equal(json.unrecordedSends, 1, JSON.stringify(json));
    assert.equal(
      fieldOf(text, 'sends'),
      `up to 1 request(s) to the provider over ${json.dispatches} dispatch(es): 0 recorded; ` +
        '1 request may have reached the provider, unrecorded',
    );
    assert.match(
      section(text, 'Provider requests'),
      /\(none recorded\)\n\s+and 1 request may have reached the provider/,
    );
    assertAuditTrail(text, sent[0].at);
    await run.terminate('test done');
  });

  it('a keyed charge a run sent twice: both sends counted, each audit entry once', async () => {
    const input = renewalInput(uniqueEvent('show-run-charge'));
    const run = await crashPastCommit('charge', () => stack.retrysafe.startRenewal(input));
    await run.result();
    const key = actionKeyForStep(run.workflowId, { operation: 'charge', version: 1 });
    const counts = countForKey(await stack.providers.payments.ledger(), key);
    assert.deepEqual([counts.requests, counts.records], [2, 1], 'sent twice with one key, charged once');

    const { text, json } = await show(key);
    assert.equal(mostSends(fieldOf(text, 'sends')), counts.requests, fieldOf(text, 'sends'));
    assert.equal(json.sends + (json.unrecordedSends ?? 0), counts.requests);
    assertAuditTrail(text, firstRequestAt(await stack.providers.payments.ledger(), key));
  });

  it('a keyed charge application code claimed, sent twice: never fewer than the provider saw', async () => {
    const eventId = uniqueEvent('show-claimed-charge');
    const claimed = await crashPastCommit('charge', () =>
      stack.retrysafe.claimAction({ tenant: 'acme', eventId }, acmeCharge(eventId, 1_990)),
    );
    await waitForStatus(stack.retrysafe, claimed.key, 'confirmed', { timeoutMs: 90_000 });
    const counts = countForKey(await stack.providers.payments.ledger(), claimed.key);
    assert.deepEqual([counts.requests, counts.records], [2, 1], 'sent twice with one key, charged once');

    const { text, json } = await show(claimed.key);
    assert.equal(mostSends(fieldOf(text, 'sends')), counts.requests, fieldOf(text, 'sends'));
    assert.equal(json.sends + (json.unrecordedSends ?? 0), counts.requests);
    assertAuditTrail(text, firstRequestAt(await stack.providers.payments.ledger(), claimed.key));
  });
});

/** The audit trail: its first dispatch before the provider got the request and close to it, each entry once. */
function assertAuditTrail(text: string, providerGotItAt: string): void {
  const rows = section(text, 'Audit trail').split('\n').slice(2);
  const dispatch = rows.find((r) => /→ dispatching/.test(r));
  assert.ok(dispatch, text);
  const dispatchedAt = Date.parse(dispatch.trim().split(/\s+/)[0]);
  const receivedAt = Date.parse(providerGotItAt);
  assert.ok(
    dispatchedAt <= receivedAt && receivedAt - dispatchedAt < 2_000,
    `first dispatch on the trail at ${dispatch.trim().split(/\s+/)[0]}, the provider got it at ${providerGotItAt}`,
  );
  assert.equal(new Set(rows).size, rows.length, `an audit entry shown twice:\n${rows.join('\n')}`);
  assert.doesNotMatch(text, /run:run:/, 'a holder named with its prefix doubled');
}

function firstRequestAt(ledger: Awaited<ReturnType<Stack['providers']['payments']['ledger']>>, key: string): string {
  const first = ledger.requests.find((r) => r.idempotencyKey === key);
  assert.ok(first, `no request for ${key} at the provider`);
  return first.at;
}

/** One `name:  value` line of the overview. */
function fieldOf(text: string, name: string): string {
  const line = text.split('\n').find((l) => l.startsWith(`${name}:`));
  assert.ok(line, `no ${name} line in:\n${text}`);
  return line.slice(name.length + 1).trim();
}

/** The most requests the sends line says may have reached the provider. */
function mostSends(line: string): number {
  const n = /^(?:up to )?(\d+) request\(s\)/.exec(line)?.[1];
  assert.ok(n, line);
  return Number(n);
}

/** A block of the output, from its heading to the next blank line. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`${heading}`);
  assert.ok(start >= 0, `no ${heading} in:\n${text}`);
  const end = text.indexOf('\n\n', start);
  return text.slice(start, end < 0 ? undefined : end);
}
