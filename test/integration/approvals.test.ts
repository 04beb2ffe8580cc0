import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { SignedDecision } from '../../policies/signed-decision';
import { errorCodeOf, errorDetailsOf, RetrysafeError } from '../../policies/errors';
import { exampleRegistry, type ChargeIntent } from '../../examples/tools';
import { startApprovalServer, type SignedEvent } from '../../cli/approvals/approval-http';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  operatorScopesOf,
  submitApproval,
} from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { approveUpdate, dryRunQuery, type ApprovalOutcome, type DryRun } from '../../messages/approval';
import type { ActionSnapshot } from '../../messages/action';
import { uniqueEvent } from '../support/renewal-input';
import { sleep, waitForStatus } from '../support/wait';

/**
 * Signed approvals end to end: real dev server, payments provider process and a worker process that
 * trusts one approval key. Charges of 5 000 cents or more wait for a signed approval of their exact
 * request; every count below is taken at the payments provider's ledger.
 */

const TENANT = 'acme';
const KEYS = generateApprovalKeyPair();
const OPERATOR_TOKEN = 'approvals-test-operator-token-3f9c2a';
const OPERATORS = [
  {
    name: 'dana',
    tokenSha256: hashOperatorToken(OPERATOR_TOKEN),
    tenants: [TENANT],
    roles: ['approver', 'resolver'] as const,
  },
].map((o) => ({ ...o, roles: [...o.roles] }));
const signer = createApprovalSigner({ privateKeyHex: KEYS.privateKeyHex, keyId: KEYS.keyId, operators: OPERATORS });
const operator = signer.authenticate(OPERATOR_TOKEN)!;
const WORKER_ENV = {
  RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [KEYS.keyId]: KEYS.publicKeyHex }),
  RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(signer.operators)),
};
/**
 * Long enough for a worker that was going to dispatch to have done it. A fixed wait on purpose: every use checks that
 * nothing happened (no dispatch, no charge, no status change), and a refused or withheld approval leaves no event to
 * wait for.
 */
const SETTLE_MS = 1_500;

function chargeIntent(reference: string, amountCents = 7500): ChargeIntent {
  return {
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: reference,
  };
}

/** What the sender of a refused approval got back, as the closing note quotes it. */
interface Refusal {
  case: string;
  errorClass: string;
  failureType: string;
  reason: string;
  message: string;
  charges: number;
  statusAfter: string;
}
const refusals: Refusal[] = [];

describe('signed approvals on a real Temporal server with the payments provider process', () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    await stack.startWorker({ name: 'approvals', env: WORKER_ENV });
  });
  after(async () => {
    await stack?.stop();
  });

  /** Claims a charge for a fresh business event and waits until it rests in awaiting_confirmation. */
  async function claimWaitingCharge(prefix: string, amountCents = 7500, expected = 'awaiting_confirmation') {
    const eventId = uniqueEvent(prefix);
    const intent = chargeIntent(`ord-${eventId}`.slice(0, 100), amountCents);
    const claimed = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, intent);
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, [
      'awaiting_confirmation',
      'dispatching',
      'confirmed',
      'failed',
      'unknown',
      'needs_review',
    ]);
    assert.equal(waiting.status, expected, JSON.stringify(waiting.audit));
    return { key: claimed.key, requestHash: claimed.requestHash, intent, reference: intent.merchantReference };
  }

  /** Requests, commits and charge records at the payments provider for one action (by key or reference). */
  async function atProvider(key: string, reference: string) {
    const ledger = await stack.providers.payments.ledger();
    const requests = ledger.requests.filter((r) => r.idempotencyKey === key || r.reference === reference);
    const charges = (ledger.records.charges ?? []).filter((r) => {
      const rec = r as { idempotencyKey?: string; merchantReference?: string };
      return rec.idempotencyKey === key || rec.merchantReference === reference;
    });
    return {
      requests: requests.length,
      committed: requests.filter((r) => r.outcome === 'committed').length,
      charges: charges.length,
      chargeIds: charges.map((c) => c.id),
    };
  }

  const dryRunOf = (key: string) =>
    stack.client.workflow.getHandle(key).query(dryRunQuery) as Promise<DryRun | undefined>;
  const sign = (key: string, hash: string, decision: 'approve' | 'reject' = 'approve') =>
    signer.sign(operator, { key, requestHash: hash, decision });
  /** Delivers anything as the approve update to one action, as a client that skips submitApproval's checks would. */
  const deliver = (key: string, approval: unknown) =>
    stack.client.workflow.getHandle(key).executeUpdate(approveUpdate, { args: [approval as SignedDecision] });

  it('holds a 7500-cent charge in awaiting_confirmation with a dry run and no provider request, then charges once when approved', async (t) => {
    const action = await claimWaitingCharge('approve-once');
    const dryRun = await dryRunOf(action.key);
    assert.ok(dryRun, 'a dry run is published while the action waits');
    assert.equal(dryRun.key, action.key);
    assert.equal(dryRun.operation, 'charge');
    assert.equal(dryRun.requestHash, action.requestHash);
    assert.equal(dryRun.target, 'customer cus_acme (payment method pm_7)');
    assert.equal(dryRun.scope, 'one charge of 7500 USD minor units');
    assert.equal(dryRun.amountCents, 7500);
    assert.equal(dryRun.currency, 'usd');
    assert.equal(dryRun.policy.mode, 'confirm');
    assert.ok(dryRun.policy.rows.includes('money.confirm'), dryRun.policy.rows.join(', '));
    assert.equal(dryRun.payload.merchantReference, action.reference);

    await sleep(SETTLE_MS);
    assert.equal((await stack.retrysafe.getAction(action.key))?.status, 'awaiting_confirmation');
    assert.deepEqual(await atProvider(action.key, action.reference), {
      requests: 0,
      committed: 0,
      charges: 0,
      chargeIds: [],
    });

    const outcome = await submitApproval(stack.client, sign(action.key, action.requestHash));
    assert.equal(outcome.key, action.key);
    assert.equal(outcome.decision, 'approve');
    assert.equal(outcome.approver, OPERATORS[0].name);
    const done = await waitForStatus(stack.retrysafe, action.key, ['confirmed', 'failed', 'unknown', 'needs_review'], {
      timeoutMs: 30_000,
    });
    const seen = await atProvider(action.key, action.reference);
    t.diagnostic(`provider: ${JSON.stringify(seen)}; path ${done.audit.map((a) => a.to).join(' > ')}`);
    assert.equal(done.status, 'confirmed', JSON.stringify(done.audit));
    assert.equal(done.approvedBy, OPERATORS[0].name);
    assert.equal(seen.charges, 1, 'exactly one charge');
    assert.equal(seen.committed, 1);
    assert.equal(done.providerRef, seen.chargeIds[0]);
  });

  it('charges once when the same approval is sent twice at once and a freshly signed one follows', async (t) => {
    const action = await claimWaitingCharge('approve-twice');
    const approval = sign(action.key, action.requestHash);
    const answers = await Promise.allSettled([
      submitApproval(stack.client, approval),
      submitApproval(stack.client, approval),
    ]);
    const same = (o: ApprovalOutcome) => ({ key: o.key, decision: o.decision, approver: o.approver });
    // One of the two is taken; the other is the same envelope again: answered with the same decision, or
    // refused because its nonce is spent. Neither acts twice.
    const taken = answers
      .filter((a): a is PromiseFulfilledResult<ApprovalOutcome> => a.status === 'fulfilled')
      .map((a) => a.value);
    assert.ok(taken.length >= 1, 'the approval was taken');
    const first = taken[0];
    for (const o of taken)
      assert.deepEqual(same(o), { key: action.key, decision: 'approve', approver: OPERATORS[0].name });
    for (const o of taken) assert.ok(['dispatching', 'confirmed'].includes(o.status), o.status);
    for (const a of answers) {
      if (a.status === 'rejected') assert.equal(errorCodeOf(a.reason), 'DecisionRejected', String(a.reason));
    }

    await waitForStatus(stack.retrysafe, action.key, ['confirmed', 'failed', 'unknown', 'needs_review'], {
      timeoutMs: 30_000,
    });
    const fresh = sign(action.key, action.requestHash);
    assert.notEqual(fresh.claims.nonce, approval.claims.nonce);
    const third = await submitApproval(stack.client, fresh);
    assert.deepEqual(same(third), same(first), 'a fresh approval after the fact is answered with the first outcome');
    assert.equal(third.status, 'confirmed');

    await sleep(SETTLE_MS);
    const done = await stack.retrysafe.getAction(action.key);
    const seen = await atProvider(action.key, action.reference);
    t.diagnostic(
      `outcomes: ${answers.map((a) => a.status).join(', ')}, then ${third.status}; provider: ${JSON.stringify(seen)}`,
    );
    assert.equal(done?.status, 'confirmed');
    assert.equal(done?.dispatches, 1, 'dispatched once');
    assert.equal(seen.charges, 1, 'exactly one charge');
    assert.equal(seen.committed, 1);
    assert.equal(done?.audit.filter((a) => a.reason.startsWith('approved')).length, 1, 'one approval recorded');
  });

  describe("refuses approvals that are not a trusted operator's signature over this exact request", () => {
    let target: Awaited<ReturnType<typeof claimWaitingCharge>>;
    let other: Awaited<ReturnType<typeof claimWaitingCharge>>;

    before(async () => {
      target = await claimWaitingCharge('attacked');
      other = await claimWaitingCharge('bystander');
    });

    /** Sends `approval` to the target action and records what came back; asserts it was refused for `reason`. */
    async function expectRefused(
      t: { diagnostic(msg: string): void },
      name: string,
      reason: string,
      send: () => Promise<unknown>,
    ) {
      const err = await send().then(
        (outcome) => assert.fail(`${name}: accepted: ${JSON.stringify(outcome)}`),
        (e: unknown) => e,
      );
      const details = (errorDetailsOf(err) ?? {}) as { reason?: string };
      await sleep(SETTLE_MS);
      const snap = (await stack.retrysafe.getAction(target.key)) as ActionSnapshot;
      const seen = await atProvider(target.key, target.reference);
      const row: Refusal = {
        case: name,
        errorClass: (err as Error).constructor?.name ?? typeof err,
        failureType: errorCodeOf(err) ?? '?',
        reason: details.reason ?? '?',
        message: (err as Error).message,
        charges: seen.charges,
        statusAfter: snap.status,
      };
      refusals.push(row);
      t.diagnostic(`${row.errorClass} ${row.failureType} reason=${row.reason}: ${row.message}`);
      // Through the approval service's submit path a refusal is the validator's typed error; sent raw, the SDK's.
      assert.ok(err instanceof RetrysafeError || err instanceof WorkflowUpdateFailedError, `${name}: ${String(err)}`);
      assert.equal(errorCodeOf(err), 'DecisionRejected');
      assert.equal(details.reason, reason, `${name}: ${row.message}`);
      assert.equal(snap.status, 'awaiting_confirmation', `${name}: the action still waits`);
      assert.equal(snap.approvedBy, undefined);
      assert.deepEqual([seen.requests, seen.charges], [0, 0], `${name}: nothing reached the provider`);
    }

    it('refuses a forged signature (one hex digit flipped)', async (t) => {
      const genuine = sign(target.key, target.requestHash);
      const i = 10;
      const flipped = genuine.signature[i] === '0' ? '1' : '0';
      const forged = {
        ...genuine,
        signature: genuine.signature.slice(0, i) + flipped + genuine.signature.slice(i + 1),
      };
      await expectRefused(t, 'forged signature', 'bad-signature', () => submitApproval(stack.client, forged));
    });

    it('refuses an approval signed by a key the worker does not trust', async (t) => {
      const rogueKeys = generateApprovalKeyPair();
      const rogue = createApprovalSigner({
        privateKeyHex: rogueKeys.privateKeyHex,
        keyId: rogueKeys.keyId,
        operators: OPERATORS,
      });
      const approval = rogue.sign(rogue.authenticate(OPERATOR_TOKEN)!, {
        key: target.key,
        requestHash: target.requestHash,
        decision: 'approve',
      });
      await expectRefused(t, 'untrusted key', 'unknown-key', () => submitApproval(stack.client, approval));
    });

    it('refuses an untrusted key that claims the trusted key id', async (t) => {
      const rogueKeys = generateApprovalKeyPair();
      const rogue = createApprovalSigner({
        privateKeyHex: rogueKeys.privateKeyHex,
        keyId: KEYS.keyId,
        operators: OPERATORS,
      });
      const approval = rogue.sign(rogue.authenticate(OPERATOR_TOKEN)!, {
        key: target.key,
        requestHash: target.requestHash,
        decision: 'approve',
      });
      await expectRefused(t, 'untrusted key under trusted id', 'bad-signature', () =>
        submitApproval(stack.client, approval),
      );
    });

    it('refuses a genuine approval of another action delivered to this one', async (t) => {
      const forOther = sign(other.key, other.requestHash);
      await expectRefused(t, 'approval for another action key', 'wrong-action', () => deliver(target.key, forOther));
      const bystander = await stack.retrysafe.getAction(other.key);
      assert.equal(bystander?.status, 'awaiting_confirmation', 'the other action was not approved either');
      assert.equal((await atProvider(other.key, other.reference)).charges, 0);
    });

    it('refuses an approval of a changed request (the hash of a 49900-cent charge)', async (t) => {
      const changed = exampleRegistry().parseIntent({ ...target.intent, amountCents: 49_900 });
      const changedHash = exampleRegistry().hash(changed);
      assert.notEqual(changedHash, target.requestHash);
      await expectRefused(t, 'changed request hash (49900 cents)', 'hash-mismatch', () =>
        submitApproval(stack.client, sign(target.key, changedHash)),
      );
    });

    it('refuses an approval that expired before it arrived', async (t) => {
      const late = createApprovalSigner({
        privateKeyHex: KEYS.privateKeyHex,
        keyId: KEYS.keyId,
        operators: OPERATORS,
        clock: () => Date.now() - 20 * 60 * 1000,
      });
      const approval = late.sign(late.authenticate(OPERATOR_TOKEN)!, {
        key: target.key,
        requestHash: target.requestHash,
        decision: 'approve',
      });
      await expectRefused(t, 'expired (signed 20 min ago, 10 min TTL)', 'expired', () =>
        submitApproval(stack.client, approval),
      );
    });

    it('refuses an approval issued in the future (signer clock 20 min ahead)', async (t) => {
      const early = createApprovalSigner({
        privateKeyHex: KEYS.privateKeyHex,
        keyId: KEYS.keyId,
        operators: OPERATORS,
        clock: () => Date.now() + 20 * 60 * 1000,
      });
      const approval = early.sign(early.authenticate(OPERATOR_TOKEN)!, {
        key: target.key,
        requestHash: target.requestHash,
        decision: 'approve',
      });
      await expectRefused(t, 'issued in the future (clock +20 min)', 'not-yet-valid', () =>
        submitApproval(stack.client, approval),
      );
    });

    it('refuses an approval without a signature', async (t) => {
      const { claims, publicKeyId } = sign(target.key, target.requestHash);
      await expectRefused(t, 'unsigned (signature removed)', 'unsigned', () =>
        deliver(target.key, { claims, publicKeyId }),
      );
    });

    it('refuses a malformed approval object', async (t) => {
      const genuine = sign(target.key, target.requestHash);
      await expectRefused(t, 'malformed ({ approve: true } + signature)', 'malformed', () =>
        deliver(target.key, { approve: true, key: target.key, signature: genuine.signature }),
      );
    });

    it('refuses genuine claims with an extra field smuggled in', async (t) => {
      const genuine = sign(target.key, target.requestHash);
      const padded = { ...genuine, claims: { ...genuine.claims, amountCents: 49_900 } };
      await expectRefused(t, 'malformed (extra claims field)', 'malformed', () => deliver(target.key, padded));
    });

    it('still charges exactly once on the genuine approval after every refused one', async () => {
      const outcome = await submitApproval(stack.client, sign(target.key, target.requestHash));
      assert.equal(outcome.approver, OPERATORS[0].name);
      const done = await waitForStatus(
        stack.retrysafe,
        target.key,
        ['confirmed', 'failed', 'unknown', 'needs_review'],
        { timeoutMs: 30_000 },
      );
      assert.equal(done.status, 'confirmed', JSON.stringify(done.audit));
      const seen = await atProvider(target.key, target.reference);
      assert.deepEqual([seen.charges, seen.committed], [1, 1]);
    });
  });

  it('fails a rejected charge with DecisionRejected and charges nothing', async () => {
    const action = await claimWaitingCharge('rejected');
    const outcome = await submitApproval(stack.client, sign(action.key, action.requestHash, 'reject'));
    assert.equal(outcome.decision, 'reject');
    assert.equal(outcome.approver, OPERATORS[0].name);
    assert.equal(outcome.status, 'failed');
    const done = await waitForStatus(stack.retrysafe, action.key, ['failed', 'confirmed', 'unknown', 'needs_review']);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'DecisionRejected');
    assert.match(done.error?.message ?? '', new RegExp(`rejected by ${OPERATORS[0].name}`));
    assert.equal(done.audit.at(-1)?.by, OPERATORS[0].name);
    await sleep(SETTLE_MS);
    const seen = await atProvider(action.key, action.reference);
    assert.deepEqual([seen.requests, seen.charges], [0, 0]);
  });

  it('holds a charge above the per-action limit (1 500 000 cents) as human-only without charging', async () => {
    const action = await claimWaitingCharge('above-limit', 1_500_000, 'needs_review');
    const dryRun = await dryRunOf(action.key);
    assert.equal(dryRun?.policy.mode, 'human-only');
    assert.equal(dryRun?.amountCents, 1_500_000);
    assert.ok(
      dryRun?.policy.reasons.some((r) => /above the per-action limit 1000000/.test(r)),
      dryRun?.policy.reasons.join('\n'),
    );
    const snap = await stack.retrysafe.getAction(action.key);
    assert.equal(snap?.decisionMode, 'human-only');
    await sleep(SETTLE_MS);
    assert.equal((await stack.retrysafe.getAction(action.key))?.status, 'needs_review');
    const seen = await atProvider(action.key, action.reference);
    assert.deepEqual([seen.requests, seen.charges], [0, 0]);
    // The agent never performs a human-only action: an operator cannot send it back to the executor…
    await assert.rejects(
      stack.retrysafe.resolveAction(
        signer.sign(operator, {
          decision: 'resolve',
          key: action.key,
          requestHash: action.requestHash,
          params: { outcome: 'not-happened', reason: 'please just run it' },
        }),
      ),
      (err: unknown) => errorCodeOf(err) === 'IllegalTransition',
    );
    // …but records what a person did.
    const done = await stack.retrysafe.resolveAction(
      signer.sign(operator, {
        decision: 'resolve',
        key: action.key,
        requestHash: action.requestHash,
        params: {
          outcome: 'confirmed',
          reason: 'wired by treasury after a call with the customer',
          providerRef: 'wire-7781',
        },
      }),
    );
    assert.equal(done.status, 'confirmed');
    const after = await atProvider(action.key, action.reference);
    assert.deepEqual([after.requests, after.charges], [0, 0], 'the agent sent nothing');
  });

  // policies/decision-table.ts defines human-only as "the run stops in needs_review; a person acts or resolves it".
  it('does not charge an amount above the per-action limit on a single approval click', async (t) => {
    const action = await claimWaitingCharge('above-limit-click', 1_500_000, 'needs_review');
    const answer = await submitApproval(stack.client, sign(action.key, action.requestHash)).then(
      (outcome) => `accepted: ${outcome.status}`,
      (err: unknown) => `refused: ${errorCodeOf(err) ?? String(err)}`,
    );
    await sleep(SETTLE_MS * 2);
    const snap = await stack.retrysafe.getAction(action.key);
    const seen = await atProvider(action.key, action.reference);
    t.diagnostic(`approval ${answer}; status ${snap?.status}; provider ${JSON.stringify(seen)}`);
    assert.deepEqual(
      [seen.requests, seen.charges],
      [0, 0],
      `a 1 500 000-cent charge reached the provider on one approval click (status ${snap?.status}): ${snap?.audit.map((a) => a.to).join(' > ')}`,
    );
    assert.ok(snap && !['dispatching', 'confirmed'].includes(snap.status), snap?.status);
  });

  it("signs through the approval HTTP endpoint for the operator's token and refuses a wrong token with 401", async () => {
    const signed: SignedEvent[] = [];
    const server = await startApprovalServer(signer, { port: 0, onSigned: (e) => signed.push(e) });
    try {
      const action = await claimWaitingCharge('http-approval');
      const post = (token: string) =>
        fetch(`${server.url}/approvals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ key: action.key, requestHash: action.requestHash, decision: 'approve' }),
        });

      const refused = await post('not-the-operator-token');
      assert.equal(refused.status, 401);
      const refusedBody = (await refused.json()) as Record<string, unknown>;
      assert.equal(refusedBody.error, 'unauthorized');
      assert.equal('signature' in refusedBody, false);
      assert.equal(signed.length, 0, 'nothing was signed for a wrong token');
      await sleep(SETTLE_MS);
      assert.equal((await stack.retrysafe.getAction(action.key))?.status, 'awaiting_confirmation');
      assert.equal((await atProvider(action.key, action.reference)).requests, 0);

      const res = await post(OPERATOR_TOKEN);
      assert.equal(res.status, 200);
      const approval = (await res.json()) as SignedDecision;
      assert.equal(approval.claims.operator, OPERATORS[0].name);
      assert.equal(approval.publicKeyId, KEYS.keyId);
      assert.deepEqual(
        signed.map((e) => [e.operator, e.key, e.decision]),
        [[OPERATORS[0].name, action.key, 'approve']],
      );
      const outcome = await submitApproval(stack.client, approval);
      assert.equal(outcome.approver, OPERATORS[0].name);
      const done = await waitForStatus(
        stack.retrysafe,
        action.key,
        ['confirmed', 'failed', 'unknown', 'needs_review'],
        { timeoutMs: 30_000 },
      );
      assert.equal(done.status, 'confirmed', JSON.stringify(done.audit));
      assert.equal(done.approvedBy, OPERATORS[0].name);
      const seen = await atProvider(action.key, action.reference);
      assert.deepEqual([seen.charges, seen.committed], [1, 1]);
    } finally {
      await server.close();
    }
  });
});

after(() => {
  if (!refusals.length) return;
  const rows = refusals.map((r) => [
    r.case,
    `${r.errorClass} › ${r.failureType} › ${r.reason}`,
    String(r.charges),
    r.statusAfter,
    r.message,
  ]);
  const header = ['case', 'sender got', 'charges', 'status after', 'message'];
  const widths = header.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i].length))));
  const line = (cells: string[]) => cells.map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]) : c)).join(' | ');
  console.log(['', 'approval attacks: what the sender got', line(header), ...rows.map(line)].join('\n'));
});
