import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { formatActionKey } from '../../policies/action-key';
import { RetrysafeError, errorCodeOf } from '../../policies/errors';
import { canonicalJson } from '../../policies/request-hash';
import type { Intent } from '../../policies/tool-registry';
import type { FulfillmentResult } from '../../examples/workflows/fulfillment-agent';
import { recordedRun } from '../../client/recorded-acts';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { Ledger } from '../../examples/sandbox-providers/spawn';
import type { ActionSnapshot } from '../../messages/action';
import { countForKey } from '../support/ledger';
import { runOpsProcess } from '../support/ops-process';
import { waitForStatus } from '../support/wait';
import { chargeIntentFor, renewalInput, uniqueEvent } from '../support/renewal-input';

const MASKING_TENANT = 'maskco';

/**
 * Card numbers that must never reach Temporal in any form: refused claims, and claims masked before the
 * hash. The dev server's SQLite file is searched for them at the end.
 */
const NEVER_RECORDED = ['4242 4242 4242 4242', '5555-5555-5555-4444', '378282246310005', '6011 0009 9013 9424'];
/** Card numbers given to runs as an order ID (an identifier, so it is in the run's own input). */
const RUN_REFUSED = '4000056655665556';
const RUN_MASKED = '5105105105105100';

const digitsOf = (s: string) => s.replace(/\D/g, '');
/** Every form of the number a test looks for: as written and as a bare digit run. */
const formsOf = (card: string) => [...new Set([card, digitsOf(card)])];
const holdsAny = (text: string, cards: readonly string[]) => cards.flatMap(formsOf).filter((f) => text.includes(f));

const chargeWith = (description: string, merchantReference: string): Intent => ({
  operation: 'charge',
  amountCents: 4990,
  currency: 'usd',
  customerId: 'cus_acme',
  paymentMethod: 'pm_card_visa',
  merchantReference,
  description,
});
const emailWith = (body: string): Intent => ({
  operation: 'send-email',
  to: 'alice@example.com',
  subject: 'About your renewal',
  body,
  template: 'dispatch-notice',
});
const key = (operation: string, tenant: string, eventId: string, step?: string) =>
  formatActionKey({ operation, version: 1, tenant, eventId, ...(step ? { stepId: step } : {}) });

/** All text of a workflow's history: strings and every payload's bytes decoded as UTF-8. */
async function historyText(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') parts.push(v);
    else if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history);
  return parts.join('\n');
}

function assertRefused(err: unknown, field: string, card: string): true {
  assert.ok(err instanceof RetrysafeError, String(err));
  assert.equal(err.code, 'InvalidIntent');
  assert.equal(err.details.field, field);
  assert.match(err.message, new RegExp(`: ${field}: looks like a card number`));
  assert.deepEqual(holdsAny(`${err.message} ${JSON.stringify(err.details)}`, [card]), []);
  return true;
}

const requestsFor = (ledger: Ledger, k: string) =>
  ledger.requests.filter((r) => r.idempotencyKey === k || r.reference === k).length;

describe('card numbers in free text, on the real dev server', () => {
  let stack: Stack;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'card-numbers-'));
    const policyFile = path.join(dir, 'tenant-policies.json');
    await writeFile(policyFile, JSON.stringify({ tenants: { [MASKING_TENANT]: { cardNumbersInText: 'mask' } } }));
    stack = await startStack({ providerKinds: ['payments', 'email'] });
    await stack.startWorker({ name: 'steady', env: { RETRYSAFE_POLICY_FILE: policyFile } });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a claimed charge with a card number in its description: field named, nothing recorded, nothing sent', async () => {
    const eventId = uniqueEvent('card-charge');
    const card = NEVER_RECORDED[0];
    await assert.rejects(
      stack.retrysafe.claimAction({ tenant: 'acme', eventId }, chargeWith(`Renewal, card ${card}`, `A-${eventId}`)),
      (err) => assertRefused(err, 'description', card),
    );
    const k = key('charge', 'acme', eventId);
    assert.equal(await stack.retrysafe.getAction(k), undefined, 'no action workflow exists');
    assert.equal(requestsFor(await stack.providers.payments.ledger(), k), 0, 'zero requests at the payments provider');
  });

  it('refuses a claimed email with a card number in its body', async () => {
    const eventId = uniqueEvent('card-email');
    const card = NEVER_RECORDED[1];
    await assert.rejects(
      stack.retrysafe.claimAction({ tenant: 'acme', eventId }, emailWith(`Hi,\nplease charge ${card} from now on.`)),
      (err) => assertRefused(err, 'body', card),
    );
    const k = key('send-email', 'acme', eventId);
    assert.equal(await stack.retrysafe.getAction(k), undefined);
    const email = await stack.providers.email.ledger();
    assert.equal(requestsFor(email, k), 0, 'zero requests at the email provider');
    assert.deepEqual(
      (email.records.messages ?? []).filter((m) => holdsAny(JSON.stringify(m), [card]).length),
      [],
    );
  });

  it('refuses in a run too: the prepare step fails the run with the field named, and no email is sent', async () => {
    const eventId = uniqueEvent('card-run');
    await confirmed(stack.retrysafe.claimAction({ tenant: 'acme', eventId }, chargeIntentFor(renewalInput(eventId))));
    const run = await stack.retrysafe.startFulfillment({
      tenant: 'acme',
      eventId,
      upstreamKey: key('charge', 'acme', eventId),
      customerEmail: 'alice@example.com',
      orderId: RUN_REFUSED,
    });
    await assert.rejects(run.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      assert.equal(errorCodeOf(err), 'InvalidIntent');
      const cause = err.cause as { message: string; details?: unknown[] };
      assert.match(cause.message, /subject: looks like a card number/);
      assert.equal((cause.details?.[0] as { field?: string }).field, 'subject');
      assert.deepEqual(holdsAny(cause.message, [RUN_REFUSED]), []);
      return true;
    });
    const emailKey = key('send-email', 'acme', eventId, 'dispatch-notice');
    assert.equal(await stack.retrysafe.getAction(emailKey), undefined, 'the email was never claimed');
    const email = await stack.providers.email.ledger();
    assert.equal(requestsFor(email, emailKey), 0, 'zero requests at the email provider');
  });

  it('masks in a run of a tenant whose policy says so: the email goes out with •••• and the last four', async () => {
    const eventId = uniqueEvent('card-run-mask');
    const upstream = await confirmed(
      stack.retrysafe.claimAction(
        { tenant: MASKING_TENANT, eventId },
        chargeIntentFor(renewalInput(eventId, { tenant: MASKING_TENANT })),
      ),
    );
    const run = await stack.retrysafe.startFulfillment({
      tenant: MASKING_TENANT,
      eventId,
      upstreamKey: upstream.key,
      customerEmail: 'alice@example.com',
      orderId: RUN_MASKED,
    });
    const result = (await run.result()) as FulfillmentResult;
    assert.equal(result.announced, true, JSON.stringify(result));
    const emailKey = result.emailKey!;
    const snapshot = await stack.retrysafe.getAction(emailKey);
    assert.equal(snapshot?.status, 'confirmed');
    // The run acted on the email's ledger row itself (no action workflow): what it sent is the intent it prepared
    // with the row's request hash (its act, a local activity, records its verdict, not its input).
    const recorded = await recordedRun(stack.client, run.workflowId);
    const act = recorded.acts.find((a) => a.result && 'snapshot' in a.result && a.result.snapshot.key === emailKey);
    assert.ok(act, 'the act is in the run history');
    const prepared = recorded.prepared.find((p) => p.requestHash === snapshot?.requestHash);
    const sentIntent = prepared?.intent as { subject: string; body: string } | undefined;
    assert.equal(sentIntent?.subject, 'Order •••• 5100 is on its way');
    assert.match(sentIntent?.body ?? '', /order •••• 5100 has been handed/);
    const seen = [
      JSON.stringify(recorded),
      JSON.stringify(snapshot),
      JSON.stringify(await stack.ledger!.get(emailKey)),
    ];
    assert.deepEqual(
      holdsAny(seen.join('\n'), [RUN_MASKED]),
      [],
      "the act's recorded input and result, the snapshot and the ledger row hold no card number",
    );
    const email = await stack.providers.email.ledger();
    const sent = (email.records.messages ?? []).filter((m) => (m as { reference?: string }).reference === emailKey);
    assert.equal(sent.length, 1);
    assert.deepEqual(holdsAny(JSON.stringify(sent), [RUN_MASKED]), [], 'the provider never saw it either');
  });

  it('masks a claim the application masked with the registry: memo, snapshot, history, ops show and provider hold only the last four', async () => {
    const eventId = uniqueEvent('card-claim-mask');
    const tools = stack.retrysafe.tools;
    const charge = tools.parseIntent(chargeWith(`Renewal, card ${NEVER_RECORDED[2]}`, `A-${eventId}`), {
      cardNumbers: 'mask',
    });
    const email = tools.parseIntent(emailWith(`Hi,\nyour card ${NEVER_RECORDED[3]} was charged.`), {
      cardNumbers: 'mask',
    });
    assert.equal(charge.description, 'Renewal, card •••• 0005');
    assert.equal(email.body, 'Hi,\nyour card •••• 9424 was charged.');
    assert.deepEqual(holdsAny(canonicalJson(charge) + canonicalJson(email), NEVER_RECORDED), [], 'the hash input');

    const charged = await confirmed(stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge));
    const emailed = await confirmed(stack.retrysafe.claimAction({ tenant: 'acme', eventId, step: 'notice' }, email));
    for (const k of [charged.key, emailed.key]) {
      const { memo } = await stack.client.workflow.getHandle(k).describe();
      const shown = await ops(['show', k, '--json']);
      assert.equal(shown.code, 0, shown.stderr);
      const seen = [
        JSON.stringify(memo),
        JSON.stringify(await stack.retrysafe.getAction(k)),
        shown.stdout,
        await historyText(stack.client, k),
      ].join('\n');
      assert.match(JSON.stringify(memo), /•••• (0005|9424)/, 'the preview shows the masked text');
      assert.deepEqual(holdsAny(seen, NEVER_RECORDED), [], `${k}: memo, snapshot, ops show and history`);
    }
    assert.equal(countForKey(await stack.providers.payments.ledger(), charged.key).records, 1);
    const providers = JSON.stringify([await stack.providers.payments.ledger(), await stack.providers.email.ledger()]);
    assert.deepEqual(holdsAny(providers, NEVER_RECORDED), [], 'no provider saw a card number');
    assert.ok(providers.includes('•••• 0005') && providers.includes('•••• 9424'));
  });

  it("leaves no refused or masked card number in the dev server's SQLite file", async () => {
    const dbFile = stack.server.dbFile;
    assert.ok(dbFile, "this test reads the dev server's SQLite file; it does not run on the cluster");
    const files = [dbFile, `${dbFile}-wal`];
    const bytes = (await Promise.all(files.map((f) => readFile(f).catch(() => Buffer.alloc(0))))).map((b) =>
      b.toString('latin1'),
    );
    const text = bytes.join('\n');
    // The check can see payloads: the order ID a run was given as input is there.
    assert.ok(text.includes(RUN_REFUSED), 'the search reaches history payloads');
    const utf8 = Buffer.concat(await Promise.all(files.map((f) => readFile(f).catch(() => Buffer.alloc(0))))).toString(
      'utf8',
    );
    assert.deepEqual(holdsAny(text, NEVER_RECORDED), []);
    assert.deepEqual(holdsAny(utf8, NEVER_RECORDED), []);
  });

  /**
   * The claimed action once confirmed. Polled rather than `{ wait: true }`: that update can race a fast
   * action's completion ("workflow update was aborted by closing workflow").
   */
  async function confirmed(claim: Promise<ActionSnapshot>): Promise<ActionSnapshot> {
    const claimed = await claim;
    return waitForStatus(stack.retrysafe, claimed.key, ['confirmed']);
  }

  const ops = (args: string[]) => runOpsProcess(stack, args);
});
