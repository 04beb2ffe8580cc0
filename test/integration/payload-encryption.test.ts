import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import type { ChargeIntent, SendEmailIntent } from '../../examples/tools';
import { RECEIPT_PATCH, type RenewalResult } from '../../examples/workflows/renewal';
import type { ActionSnapshot } from '../../messages/action';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  operatorScopesOf,
  submitApproval,
} from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { letterMarker } from '../support/intents';
import { waitForStatus } from '../support/wait';

/**
 * Payloads encrypted at rest, end to end: a real dev server on a SQLite file, provider processes and a worker process.
 * An action's intent carries a random marker (a payment method token, a charge description, an email subject and
 * body); once the actions are confirmed and the server has stopped, the SQLite file and its -wal / -shm siblings are
 * read as raw bytes. With encryption on, the marker is nowhere in them, yet the client still reads it decrypted; the
 * control stack without encryption, in the same file, shows the check finds the marker when it is there.
 */

const TENANT = 'acme';
const KEYS = generateApprovalKeyPair();
const TOKEN = 'payload-encryption-test-approver-token';
const signer = createApprovalSigner({
  privateKeyHex: KEYS.privateKeyHex,
  keyId: KEYS.keyId,
  operators: [{ name: 'erin', tokenSha256: hashOperatorToken(TOKEN), tenants: [TENANT], roles: ['approver'] }],
});
const WORKER_ENV = {
  RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [KEYS.keyId]: KEYS.publicKeyHex }),
  RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(signer.operators)),
};

interface MarkedRun {
  marker: string;
  charge: ActionSnapshot;
  email: ActionSnapshot;
}

/** A charge (automatic under 5 000 cents) and an approved email, both carrying the marker; both end confirmed. */
async function runMarkedActions(stack: Stack): Promise<MarkedRun> {
  const marker = letterMarker();
  const charge: ChargeIntent = {
    operation: 'charge',
    amountCents: 4990,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: `pm_${marker}`,
    merchantReference: `ord-${uniqueEvent('enc')}`.slice(0, 100),
    description: `renewal, ${marker}`,
  };
  const email: SendEmailIntent = {
    operation: 'send-email',
    to: 'customer@example.com',
    subject: `Your receipt ${marker}`,
    body: `Thanks for renewing. Reference ${marker}.`,
  };
  const chargeEvent = uniqueEvent('enc-charge');
  const emailEvent = uniqueEvent('enc-email');
  const [charged, claimedEmail] = await Promise.all([
    stack.retrysafe.claimAction({ tenant: TENANT, eventId: chargeEvent }, charge, { wait: true, timeoutMs: 30_000 }),
    stack.retrysafe.claimAction({ tenant: TENANT, eventId: emailEvent }, email),
  ]);
  const waiting = await waitForStatus(stack.retrysafe, claimedEmail.key, ['awaiting_confirmation', 'failed'], {
    timeoutMs: 30_000,
  });
  assert.equal(waiting.status, 'awaiting_confirmation', JSON.stringify(waiting.audit));
  await submitApproval(
    stack.client,
    signer.sign(signer.authenticate(TOKEN)!, {
      key: claimedEmail.key,
      requestHash: claimedEmail.requestHash,
      decision: 'approve',
    }),
  );
  const emailed = await stack.retrysafe.waitForOutcome(claimedEmail.key, { timeoutMs: 30_000 });
  assert.equal(charged.status, 'confirmed', JSON.stringify(charged.audit));
  assert.equal(emailed.status, 'confirmed', JSON.stringify(emailed.audit));
  return { marker, charge: charged, email: emailed };
}

/** Stops the workers and then the dev server (SQLite is flushed and closed), and reads its files as raw bytes. */
async function databaseBytes(stack: Stack): Promise<{ files: string[]; bytes: Buffer }> {
  await Promise.all(stack.workers.map((w) => w.kill('SIGKILL')));
  await stack.server.stop();
  const files: string[] = [];
  const chunks: Buffer[] = [];
  const dbFile = stack.server.dbFile;
  assert.ok(dbFile, "this test reads the dev server's SQLite file; it does not run on the cluster");
  for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) {
    try {
      chunks.push(await readFile(file));
      files.push(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return { files, bytes: Buffer.concat(chunks) };
}

/** A process missing the codec retries what it cannot decode for ever: a bounded wait turns that into a failure. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** The first payload of the workflow's started event, as the server stores it (the history is not decoded). */
async function storedInput(stack: Stack, workflowId: string): Promise<Payload> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  assert.ok(payload, `workflow ${workflowId} has a started event with input`);
  return payload as Payload;
}

/** The patches workflows/ and examples/workflows/ define: the only plain payloads a history may carry. */
const PATCH_IDS = new Set([RECEIPT_PATCH]);

function isPatchMarkerPayload(data: unknown): boolean {
  if (!ArrayBuffer.isView(data)) return false;
  try {
    const parsed = JSON.parse(text(data as Uint8Array)) as Record<string, unknown>;
    // Core writes { id, deprecated }.
    return Object.keys(parsed).every((k) => k === 'id' || k === 'deprecated') && PATCH_IDS.has(String(parsed.id));
  } catch {
    return false;
  }
}

/**
 * The encodings of every payload in a workflow's stored history (inputs, results, memo, user metadata, signals,
 * updates), except those payload codecs do not touch: search attributes, headers, and the SDK's own bookkeeping in a
 * local activity's marker (`details.data`: sequence number, attempt, activity type, times; its result is encoded)
 * and in a patch marker (the patch's name).
 */
async function storedEncodings(stack: Stack, workflowId: string): Promise<Map<string, number>> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const seen = new Map<string, number>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    if (Array.isArray(node)) return node.forEach(walk);
    const obj = node as Record<string, unknown>;
    const encoding = (obj.metadata as Record<string, Uint8Array> | undefined)?.encoding;
    if (encoding && ArrayBuffer.isView(encoding)) {
      // A patch marker's payload is the SDK's too: the patch's name, written plain by core. Only names this
      // project's code defines pass; anything else in plain JSON is counted.
      if (text(encoding) === 'json/plain' && isPatchMarkerPayload(obj.data)) return;
      seen.set(text(encoding), (seen.get(text(encoding)) ?? 0) + 1);
      return;
    }
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'searchAttributes' || k === 'header') continue;
      if (k === 'markerRecordedEventAttributes') {
        const { data: _sdkBookkeeping, ...details } = (v as { details?: Record<string, unknown> }).details ?? {};
        walk(details);
        continue;
      }
      walk(v);
    }
  };
  walk(history.events);
  return seen;
}

describe('payloads encrypted at rest on the real dev server (SQLite bytes inspected)', () => {
  let encrypted: Stack;
  let plain: Stack;

  before(async () => {
    // Both stacks at once: the file's run time is one stack start, not two. The encrypted one also runs a renewal
    // (inventory, payments, shipping), whose actions the worker's own client claims.
    [encrypted, plain] = await Promise.all([
      startStack({ workerEnv: WORKER_ENV, payloadEncryption: {} }),
      startStack({ providerKinds: ['payments', 'email'], workerEnv: WORKER_ENV, payloadEncryption: false }),
    ]);
    await Promise.all([encrypted.startWorker({ name: 'encrypting' }), plain.startWorker({ name: 'plain' })]);
  });
  after(async () => {
    await Promise.all([encrypted?.stop(), plain?.stop()]);
  });

  it('stores no trace of the intent in the SQLite files, while the client still reads it decrypted', async (t) => {
    assert.ok(encrypted.payloadKeysFile && encrypted.dataConverter, 'the stack chose a key file and a codec');
    assert.equal(encrypted.workerEnv.RETRYSAFE_PAYLOAD_KEYS_FILE, encrypted.payloadKeysFile);
    const run = await within(90_000, 'the marked actions', runMarkedActions(encrypted));
    // A run whose charge and shipment the worker claims (update-with-start from its activity's client).
    const input = renewalInput(uniqueEvent('enc-renewal'), {
      paymentMethod: `pm_${run.marker}`,
      shipTo: { line1: `1 ${run.marker} Street`, city: 'Lisbon', postalCode: '1000-001', country: 'PT' },
    });
    const renewal = await encrypted.retrysafe.startRenewal(input);
    const renewed = (await within(60_000, 'the renewal', renewal.result())) as RenewalResult;
    assert.equal(renewed.status, 'renewed', JSON.stringify(renewed));

    // Readable through the client: the memo's intent preview and the email's dry run, decoded with the stack's keys.
    const described = await encrypted.client.workflow.getHandle(run.charge.key).describe();
    const preview = described.memo?.intentPreview as Record<string, unknown>;
    assert.equal(preview.paymentMethod, `pm_${run.marker}`);
    assert.equal(preview.description, `renewal, ${run.marker}`);
    assert.ok(JSON.stringify(run.email.dryRun).includes(run.marker), 'the email dry run shows the body decrypted');
    assert.ok(run.email.summary.includes(run.marker), 'the summary (subject) reads decrypted');

    // As stored: encrypted under the stack's key, and only its codec turns it back into the intent.
    const stored = await storedInput(encrypted, run.email.key);
    assert.equal(text(stored.metadata?.encoding), 'binary/encrypted');
    assert.equal(text(stored.metadata?.['encryption-key-id']), 'k1');
    assert.equal(Buffer.from(stored.data ?? []).includes(run.marker), false);
    const [decoded] = await encrypted.dataConverter!.payloadCodecs![0].decode([stored]);
    assert.ok(text(decoded.data).includes(run.marker), 'the stored input decrypts to the intent');
    // Everything the worker wrote as well: activity inputs and results, memo upserts, summaries, update results.
    // The renewal's own actions have no workflow (its acts took their ledger rows): their intents and outcomes are
    // the run's activity inputs and results, checked with the run's history.
    for (const key of [run.charge.key, run.email.key, renewal.workflowId]) {
      const encodings = await storedEncodings(encrypted, key);
      t.diagnostic(`${key}: ${JSON.stringify(Object.fromEntries(encodings))}`);
      assert.deepEqual([...encodings.keys()], ['binary/encrypted'], `every payload of ${key} is encrypted`);
      assert.ok(encodings.get('binary/encrypted')! >= 5, `${key} has worker-written payloads too`);
    }

    const db = await databaseBytes(encrypted);
    t.diagnostic(`read ${db.bytes.length} bytes from ${db.files.map((f) => f.split('/').pop()).join(', ')}`);
    // The file holds this run (workflow IDs are plain by design), so an absent marker is not an empty read.
    for (const id of [run.charge.key, run.email.key, renewal.workflowId, renewed.actionKey]) {
      assert.ok(db.bytes.includes(id), `${id} is in the file`);
    }
    for (const form of [run.marker, Buffer.from(run.marker).toString('base64').slice(0, 20)]) {
      assert.equal(db.bytes.includes(form), false, `"${form}" found in the SQLite files of the encrypted stack`);
    }
  });

  it('control: without encryption the same check finds the marker in the SQLite files', async () => {
    assert.equal(plain.dataConverter, undefined);
    assert.equal(plain.workerEnv.RETRYSAFE_PAYLOAD_KEYS_FILE, '', 'workers are told not to encrypt either');
    const run = await within(90_000, 'the marked actions', runMarkedActions(plain));
    const stored = await storedInput(plain, run.email.key);
    assert.equal(text(stored.metadata?.encoding), 'json/plain');
    assert.equal((await storedEncodings(plain, run.email.key)).has('binary/encrypted'), false);
    const db = await databaseBytes(plain);
    assert.ok(db.bytes.includes(run.marker), 'the marker is in the SQLite files of the plain stack');
  });
});
