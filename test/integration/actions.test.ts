import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorCodeOf } from '../../policies/errors';
import { formatActionKey } from '../../policies/action-key';
import type { RenewalResult } from '../../examples/workflows/renewal';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { chargeForEvent } from '../../examples/application';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { countForKey } from '../support/ledger';
import { chargeIntentFor, renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';

const chargeKey = (eventId: string) => formatActionKey({ operation: 'charge', version: 1, tenant: 'acme', eventId });

describe('keyed actions on a real Temporal server with the payments provider process', () => {
  let stack: Stack;
  let worker: WorkerProcess;

  before(async () => {
    stack = await startStack();
    worker = await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await stack?.stop();
  });

  async function ensureWorker(): Promise<void> {
    if (!worker.alive()) worker = await stack.startWorker({ name: 'steady' });
  }

  it('charges once when the worker is SIGKILLed after the provider commits and before the outcome is recorded', async () => {
    await worker.stop();
    const doomed = await stack.startWorker({ name: 'doomed', crashAt: 'after-commit:charge' });
    const input = renewalInput(uniqueEvent('after-commit'));
    const run = await stack.retrysafe.startRenewal(input);
    const exit = await doomed.exited;
    assert.equal(exit.signal, 'SIGKILL');
    worker = await stack.startWorker({ name: 'successor' });
    const result = (await run.result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.equal(counts.records, 1, 'exactly one charge at the provider');
    assert.equal(counts.committed, 1);
    assert.ok(counts.replayed >= 1, 'the successor resent with the same key and got the original charge back');
    // The action says what the provider saw: the send it recorded, and the dead execution's, whose reply was lost,
    // as possibly sent (its `dispatching` entry on the row; the act runs in the run's workflow task, no heartbeat).
    const action = await stack.retrysafe.getAction(chargeKey(input.eventId));
    assert.equal(
      (action?.sends ?? 0) + (action?.unrecordedSends ?? 0),
      counts.requests,
      `sends ${action?.sends} + unrecorded ${action?.unrecordedSends}, provider requests ${counts.requests}`,
    );
    assert.deepEqual(
      action?.requests?.map((r) => [r.kind, r.answer.split(' ')[0]]),
      [['send', 'committed']],
      JSON.stringify(action?.requests),
    );
    const again = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: input.eventId }, chargeIntentFor(input));
    assert.equal(again.providerRef, result.chargeId);
    assert.equal(countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId)).records, 1);
  });

  it('charges once when the worker is SIGKILLed before it sends', async () => {
    await worker.stop();
    const doomed = await stack.startWorker({ name: 'doomed', crashAt: 'before-send:charge' });
    const input = renewalInput(uniqueEvent('before-send'));
    const run = await stack.retrysafe.startRenewal(input);
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    worker = await stack.startWorker({ name: 'successor' });
    const result = (await run.result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.deepEqual([counts.records, counts.requests], [1, 1], 'nothing was sent before the crash; one send after');
    assert.equal((await stack.retrysafe.getAction(chargeKey(input.eventId)))?.sends, 1);
  });

  it('charges once when the worker is SIGKILLed while the provider call is in flight', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('in-flight'));
    await stack.providers.payments.setFaults([
      { op: 'charges.create', kind: 'hold-after-commit', delayMs: 4000, times: 1 },
    ]);
    const run = await stack.retrysafe.startRenewal(input);
    await stack.providers.payments.waitForInflight((s) => s.committedButUnanswered >= 1, 20_000);
    await worker.kill('SIGKILL');
    worker = await stack.startWorker({ name: 'successor' });
    const result = (await run.result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.equal(counts.records, 1);
    assert.equal(counts.committed, 1);
  });

  it('gives one charge when two claimants race for the same key', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('race'));
    const intent = chargeIntentFor(input);
    const where = { tenant: 'acme', eventId: input.eventId };
    const [a, b] = await Promise.all([
      stack.retrysafe.claimAction({ ...where, claimant: 'client:agent-a' }, intent),
      stack.retrysafe.claimAction({ ...where, claimant: 'client:agent-b' }, intent),
    ]);
    assert.equal(a.key, b.key);
    const final = await stack.client.workflow.getHandle(a.key).query('retrysafe.status');
    assert.ok((final as { claimants: string[] }).claimants.includes('client:agent-a'));
    assert.ok((final as { claimants: string[] }).claimants.includes('client:agent-b'));
    await waitForStatus(stack.retrysafe, a.key, 'confirmed', { timeoutMs: 30_000 });
    const counts = countForKey(await stack.providers.payments.ledger(), a.key);
    assert.deepEqual([counts.records, counts.requests], [1, 1]);
  });

  it('refuses the same key with another amount, while running and after completion, and sends nothing', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('mismatch'));
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    const before = countForKey(await stack.providers.payments.ledger(), result.actionKey);
    await assert.rejects(
      stack.retrysafe.claimAction(
        { tenant: 'acme', eventId: input.eventId },
        { ...chargeIntentFor(input), amountCents: 49900 },
      ),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch' && /request hash/.test((err as Error).message),
    );
    // While the action is still open (a second event whose action we hold open by not letting a run settle it).
    const open = renewalInput(uniqueEvent('mismatch-open'));
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId: open.eventId }, chargeIntentFor(open));
    await assert.rejects(
      stack.retrysafe.claimAction(
        { tenant: 'acme', eventId: open.eventId },
        { ...chargeIntentFor(open), amountCents: 49900 },
      ),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
    );
    const afterCounts = countForKey(await stack.providers.payments.ledger(), result.actionKey);
    assert.deepEqual(afterCounts, before, 'the refused claim reached no provider');
    await waitForStatus(stack.retrysafe, claimed.key, 'confirmed', { timeoutMs: 30_000 });
    assert.equal(countForKey(await stack.providers.payments.ledger(), claimed.key).requests, 1);
  });

  it('does not retry a declined card and records the typed failure', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('declined'));
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'decline', times: 1 }]);
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    assert.equal(result.status, 'compensated', 'the reservation made before the charge is released');
    assert.equal(result.error?.code, 'BusinessRejected');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.deepEqual([counts.records, counts.requests], [0, 1], 'one request, no retry, no charge');
    const action = await stack.retrysafe.getAction(chargeKey(input.eventId));
    assert.equal(action?.status, 'failed');
  });

  it('retries 5xx and 429 with backoff, then charges once', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('transient'));
    await stack.providers.payments.setFaults([
      { op: 'charges.create', kind: 'status-5xx', times: 2 },
      { op: 'charges.create', kind: 'status-429', times: 1 },
    ]);
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.equal(counts.records, 1);
    assert.equal(counts.requests, 4, 'three transient refusals, then the commit');
  });

  it('converges on one charge when the provider drops the reply after committing', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('dropped'));
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'drop-after-commit', times: 1 }]);
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const counts = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId));
    assert.deepEqual([counts.records, counts.committed, counts.replayed], [1, 1, 1]);
  });

  it('attaches a second start of the same event to the same run, and refuses other input for it', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('twice'));
    const first = await stack.retrysafe.startRenewal(input);
    const second = await stack.retrysafe.startRenewal(input);
    assert.equal(first.workflowId, second.workflowId);
    assert.equal((await first.describe()).runId, (await second.describe()).runId);
    await assert.rejects(
      stack.retrysafe.startRenewal({ ...input, amountCents: 49900 }),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
    );
    await first.result();
    await assert.rejects(
      stack.retrysafe.startRenewal({ ...input, amountCents: 49900 }),
      (err: unknown) => errorCodeOf(err) === 'IntentMismatch',
    );
    assert.equal(countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId)).records, 1);
  });

  it('refuses bad input with a typed error naming the field, before anything reaches a provider', async () => {
    const input = renewalInput(uniqueEvent('bad-input'));
    const where = { tenant: 'acme', eventId: input.eventId };
    const requestsBefore = (await stack.providers.payments.ledger()).requests.length;
    await assert.rejects(
      stack.retrysafe.claimAction(where, { ...chargeIntentFor(input), amountCents: 49.9 }),
      (err: unknown) => {
        return (
          errorCodeOf(err) === 'InvalidIntent' &&
          (err as { details?: { field?: string } }).details?.field === 'amountCents'
        );
      },
    );
    await assert.rejects(
      stack.retrysafe.claimAction(where, { operation: 'wire-transfer' } as never),
      (err: unknown) => errorCodeOf(err) === 'UnknownOperation',
    );
    await assert.rejects(
      stack.retrysafe.claimAction(where, { ...chargeIntentFor(input), description: 'x'.repeat(40_000) }),
      (err: unknown) => errorCodeOf(err) === 'PayloadTooLarge',
    );
    await assert.rejects(
      stack.retrysafe.claimAction({ tenant: 'ac:me', eventId: 'e1' }, chargeIntentFor(input)),
      (err: unknown) => {
        return (
          errorCodeOf(err) === 'InvalidActionKey' &&
          (err as { details?: { field?: string } }).details?.field === 'tenant'
        );
      },
    );
    await assert.rejects(
      stack.retrysafe.getAction('not a key'),
      (err: unknown) => errorCodeOf(err) === 'InvalidActionKey',
    );
    assert.equal(
      (await stack.providers.payments.ledger()).requests.length,
      requestsBefore,
      'no provider request was made',
    );
  });

  it('lists actions by status through search attributes', async () => {
    await ensureWorker();
    const input = renewalInput(uniqueEvent('listed'));
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    await waitUntil(
      `${result.actionKey} listed as confirmed`,
      async () =>
        (await stack.retrysafe.listActions({ status: 'confirmed', tenant: 'acme' })).some(
          (a) => a.key === result.actionKey,
        ),
      30_000,
    );
    const failed = await stack.retrysafe.listActions({ status: 'failed' });
    assert.ok(!failed.some((a) => a.key === result.actionKey));
  });
  it('runs the application example: one charge for an event, claimed twice', { timeout: 60_000 }, async () => {
    const urls = {
      payments: stack.providers.payments.url,
      email: 'http://127.0.0.1:9',
      tickets: 'http://127.0.0.1:9',
      inventory: 'http://127.0.0.1:9',
      shipping: 'http://127.0.0.1:9',
    };
    const { first, again } = await chargeForEvent(stack.client, urls, 'app-example-1', stack.taskQueue, stack.ledger);
    assert.equal(first.status, 'confirmed');
    assert.equal(again.status, 'confirmed');
    assert.equal(again.providerRef, first.providerRef);
    const ledger = await stack.providers.payments.ledger();
    assert.equal(countForKey(ledger, first.key).records, 1);
  });
});
