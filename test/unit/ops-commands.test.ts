import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ActionFilter, ActionListing } from '../../client';
import { RetrysafeError } from '../../policies/errors';
import { requestHash } from '../../policies/request-hash';
import { decisionParams, verifyDecision, type SignedDecision } from '../../policies/signed-decision';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { createApprovalSigner, loadOperatorsFile, operatorScopesOf } from '../../cli/approvals/approval-signer';
import { runOps } from '../../cli/ops/cli';
import type { OpsClient, OpsContext } from '../../cli/ops/context';
import { OpsError, UnauthorizedError } from '../../cli/ops/errors';
import { addOperator } from '../../cli/ops/operator-auth';
import { approvalServiceSignatures, type SignatureSource } from '../../cli/ops/signatures';
import type { ActionSnapshot, OperatorResolution } from '../../messages/action';
import type { ApprovalOutcome } from '../../messages/approval';

const KEY = 'send-email:v1:acme:evt-1';
const NOW = new Date('2026-08-28T12:00:00Z');
const HASH = requestHash({ operation: 'send-email', to: 'a@example.com', subject: 's' });
/** The approval service's key, held here by the fake signature source only. */
const SERVICE_KEY = generateApprovalKeyPair();

/** Set up once per run: every fake reads operators (and their scopes) from this file, like the real services. */
let operatorsFile: string;

function snapshot(extra: Partial<ActionSnapshot> = {}): ActionSnapshot {
  return {
    key: KEY,
    operation: 'send-email',
    tenant: 'acme',
    status: 'needs_review',
    requestHash: HASH,
    owner: 'client:application',
    claimants: ['client:application'],
    summary: 'email "s" to a***@example.com',
    sends: 1,
    dispatches: 1,
    checks: [],
    audit: [{ at: NOW.toISOString(), from: null, to: 'planned', reason: 'intent persisted' }],
    ...extra,
  };
}

/**
 * A stand-in for the approval service: records every signing request and signs it the way the service
 * does (createApprovalSigner over the operators file), with a local key. `refuseWith` makes it fail instead.
 */
class RecordingSignatures implements SignatureSource {
  calls: Array<{ token: string; request: Record<string, unknown> }> = [];
  refuseWith?: Error;

  async sign(token: string, request: Record<string, unknown>): Promise<SignedDecision> {
    this.calls.push({ token, request });
    if (this.refuseWith) throw this.refuseWith;
    const signer = createApprovalSigner({
      privateKeyHex: SERVICE_KEY.privateKeyHex,
      keyId: SERVICE_KEY.keyId,
      operators: await loadOperatorsFile(operatorsFile),
      clock: () => NOW.getTime(),
    });
    const operator = signer.authenticate(token);
    if (!operator) throw new UnauthorizedError('the approval service refused the token: not recognized');
    return signer.sign(operator, request);
  }
}

/** A stand-in for RetrysafeClient that records what reached "Temporal". */
class FakeClient implements OpsClient {
  listed: ActionFilter[] = [];
  /** Every envelope submitted, verified or not. */
  submitted: SignedDecision[] = [];
  /** The resolutions the action took, as its workflow reads them from a verified envelope. */
  resolutions: Array<{ key: string; resolution: OperatorResolution }> = [];
  actions = new Map<string, ActionSnapshot>([[KEY, snapshot()]]);
  listings: ActionListing[] = [];
  refuseWith?: Error;
  neverAnswer = false;
  waiting: Array<{ workflowId: string; waitingOn: string; status: string }> = [];

  async listWaitingRuns(): Promise<Array<{ workflowId: string; waitingOn: string; status: string }>> {
    return this.waiting;
  }

  async listActions(filter: ActionFilter = {}): Promise<ActionListing[]> {
    this.listed.push(filter);
    return this.listings;
  }
  async getAction(key: string): Promise<ActionSnapshot | undefined> {
    return this.actions.get(key);
  }
  /** The approvals the action took, verified as its workflow verifies them. */
  approvals: Array<{ key: string; decision: string; operator: string; requestHash?: string }> = [];
  async approveAction(signed: SignedDecision): Promise<ApprovalOutcome> {
    this.submitted.push(signed);
    if (this.refuseWith) throw this.refuseWith;
    const key = signed.claims.key;
    const current = this.actions.get(key)!;
    const claims = verifyDecision(
      signed,
      { decisions: ['approve', 'reject'], key: current.key, tenant: current.tenant, requestHash: current.requestHash },
      {
        keys: { [SERVICE_KEY.keyId]: SERVICE_KEY.publicKeyHex },
        operators: operatorScopesOf(await loadOperatorsFile(operatorsFile)),
      },
      NOW.getTime(),
    );
    this.approvals.push({ key, decision: claims.decision, operator: claims.operator, requestHash: claims.requestHash });
    const status = claims.decision === 'approve' ? 'confirmed' : 'failed';
    this.actions.set(key, { ...current, status, ...(status === 'confirmed' ? { providerRef: 'msg_9' } : {}) });
    return { key, decision: claims.decision as 'approve' | 'reject', approver: claims.operator, status };
  }
  async resolveAction(signed: SignedDecision): Promise<ActionSnapshot> {
    this.submitted.push(signed);
    if (this.neverAnswer) return new Promise<never>(() => undefined);
    if (this.refuseWith) throw this.refuseWith;
    const key = signed.claims.key;
    const current = this.actions.get(key)!;
    // What the action's workflow does with it: verify against its own key, tenant and request hash and
    // the trusted key and operator scopes, then read the decision's parameters.
    const claims = verifyDecision(
      signed,
      { decisions: ['resolve'], key: current.key, tenant: current.tenant, requestHash: current.requestHash },
      {
        keys: { [SERVICE_KEY.keyId]: SERVICE_KEY.publicKeyHex },
        operators: operatorScopesOf(await loadOperatorsFile(operatorsFile)),
      },
      NOW.getTime(),
    );
    const params = decisionParams({ ...claims, decision: 'resolve' });
    const resolution: OperatorResolution = {
      decision: params.outcome,
      operator: claims.operator,
      reason: params.reason,
      ...(params.providerRef !== undefined ? { providerRef: params.providerRef } : {}),
    };
    this.resolutions.push({ key, resolution });
    const next = snapshot({
      status: 'confirmed',
      providerRef: resolution.providerRef,
      audit: [
        ...current.audit,
        {
          at: NOW.toISOString(),
          from: current.status,
          to: 'confirmed',
          reason: `operator: ${resolution.reason}`,
          by: resolution.operator,
        },
      ],
    });
    this.actions.set(key, next);
    return next;
  }
}

describe('ops commands against a fake client', () => {
  let dir: string;
  let token: string;
  /** May approve on acme, but not resolve. */
  let approverOnlyToken: string;
  /** May resolve, but only on globex. */
  let otherTenantToken: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ops-cmd-'));
    operatorsFile = path.join(dir, 'operators.json');
    token = (await addOperator(operatorsFile, 'alice')).token;
    approverOnlyToken = (await addOperator(operatorsFile, 'ava', NOW, { tenants: ['acme'], roles: ['approver'] }))
      .token;
    otherTenantToken = (
      await addOperator(operatorsFile, 'gabe', NOW, { tenants: ['globex'], roles: ['approver', 'resolver'] })
    ).token;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(
    argv: string[],
    opts: { client?: FakeClient; env?: NodeJS.ProcessEnv; signatures?: RecordingSignatures } = {},
  ) {
    const client = opts.client ?? new FakeClient();
    const signatures = opts.signatures ?? new RecordingSignatures();
    const out: string[] = [];
    const err: string[] = [];
    let connects = 0;
    const ctx: OpsContext = {
      env: { RETRYSAFE_OPERATORS_FILE: operatorsFile, ...opts.env },
      out: (t) => out.push(t),
      warn: (t) => err.push(t),
      now: () => NOW,
      client: async () => {
        connects++;
        return client;
      },
      signatures,
      ledger: async () => undefined,
    };
    const code = await runOps(argv, ctx, (line) => err.push(line));
    return { code, stdout: out.join('\n'), stderr: err.join('\n'), client, connects, signatures };
  }

  /** Nothing was signed and nothing reached the action. */
  function nothingSent(r: { client: FakeClient; signatures: RecordingSignatures }, signed = false) {
    if (!signed) assert.deepEqual(r.signatures.calls, [], 'nothing was signed');
    assert.deepEqual(r.client.submitted, [], 'nothing was submitted');
    assert.deepEqual(r.client.resolutions, [], 'nothing was resolved');
  }

  const confirm = [
    'resolve',
    KEY,
    '--decision',
    'confirmed',
    '--provider-ref',
    'msg_1',
    '--reason',
    'seen in provider dashboard',
  ];

  it('queue asks for the review statuses and prints JSON oldest first', async () => {
    const client = new FakeClient();
    client.listings = [
      {
        key: 'b:v1:acme:e',
        status: 'unknown',
        operation: 'charge',
        tenant: 'acme',
        running: true,
        startTime: new Date(NOW.getTime() - 60_000),
      },
      {
        key: 'a:v1:acme:e',
        status: 'needs_review',
        operation: 'charge',
        tenant: 'acme',
        running: true,
        startTime: new Date(NOW.getTime() - 3_600_000),
      },
    ];
    const r = await run(['queue', '--json', '--tenant', 'acme', '--older-than', '30s'], { client });
    assert.equal(r.code, 0);
    assert.deepEqual(client.listed[0].status, ['unknown', 'needs_review', 'awaiting_confirmation', 'compensating']);
    assert.equal(client.listed[0].tenant, 'acme');
    assert.equal(client.listed[0].olderThanMs, 30_000);
    const rows = JSON.parse(r.stdout) as Array<{ key: string; ageSeconds: number; providerRef: string | null }>;
    assert.deepEqual(
      rows.map((x) => [x.key, x.ageSeconds, x.providerRef]),
      [
        ['a:v1:acme:e', 3600, null],
        ['b:v1:acme:e', 60, null],
      ],
    );
  });

  it('queue applies --limit after sorting, and says how many more there are', async () => {
    const client = new FakeClient();
    client.listings = [3, 1, 2].map((m) => ({
      key: `k${m}:v1:acme:e`,
      status: 'needs_review',
      operation: 'charge',
      tenant: 'acme',
      running: true,
      startTime: new Date(NOW.getTime() - m * 60_000),
    }));
    const r = await run(['queue', '--limit', '1'], { client });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^k3:v1:acme:e\s+needs_review/m);
    assert.doesNotMatch(r.stdout, /k1:v1/);
    assert.match(
      r.stdout,
      /3 action\(s\) in unknown, needs_review, awaiting_confirmation, compensating, showing the oldest 1/,
    );
  });

  it('show prints the action or exits 1 naming the key', async () => {
    const shown = await run(['show', KEY]);
    assert.equal(shown.code, 0);
    assert.match(shown.stdout, /^status: +needs_review$/m);
    const missing = await run(['show', 'send-email:v1:acme:nope']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /no action with key send-email:v1:acme:nope/);
  });

  it('show exits 2 for a malformed key without connecting', async () => {
    const r = await run(['show', 'not a key']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /KEY: /);
    assert.equal(r.connects, 0);
  });

  it('resolve without a token, or with an unknown one, exits 3 and sends nothing', async () => {
    for (const extra of [[], ['--operator-token', 'guess']]) {
      const r = await run([...confirm, ...extra]);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.connects, 0);
      nothingSent(r);
    }
  });

  it('resolve records the operator name from the file, whatever the flags say', async () => {
    const r = await run(confirm, { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.client.submitted.length, 1);
    assert.equal(r.client.submitted[0].claims.operator, 'alice');
    assert.deepEqual(r.client.resolutions, [
      {
        key: KEY,
        resolution: {
          decision: 'confirmed',
          operator: 'alice',
          reason: 'seen in provider dashboard',
          providerRef: 'msg_1',
        },
      },
    ]);
    assert.match(r.stdout, /needs_review → confirmed \(confirmed by alice: seen in provider dashboard\)/);
    for (const flag of ['--operator', '--approver', '--tenant']) {
      const spoof = await run([...confirm, flag, 'mallory'], { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
      assert.equal(spoof.code, 2, `there is no ${flag} flag to choose what is recorded`);
      nothingSent(spoof);
    }
  });

  it('resolve signs through ctx.signatures with the action’s request hash and the token’s operator', async () => {
    const r = await run(confirm, { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.signatures.calls, [
      {
        token,
        request: {
          decision: 'resolve',
          key: KEY,
          requestHash: HASH,
          params: { outcome: 'confirmed', reason: 'seen in provider dashboard', providerRef: 'msg_1' },
        },
      },
    ]);
    // The request never names the operator or the tenant: the service takes them from the token and the key.
    const [submitted] = r.client.submitted;
    assert.deepEqual(
      [submitted.claims.decision, submitted.claims.operator, submitted.claims.tenant, submitted.claims.requestHash],
      ['resolve', 'alice', 'acme', HASH],
    );
    assert.equal(submitted.publicKeyId, SERVICE_KEY.keyId);

    // The token from --operator-token is the one signed with, and a decision other than confirmed has no ref.
    const byFlag = await run([
      'resolve',
      KEY,
      '--decision',
      'failed',
      '--reason',
      'never sent',
      '--operator-token',
      token,
    ]);
    assert.equal(byFlag.code, 0, byFlag.stderr);
    assert.deepEqual(byFlag.signatures.calls, [
      {
        token,
        request: {
          decision: 'resolve',
          key: KEY,
          requestHash: HASH,
          params: { outcome: 'failed', reason: 'never sent' },
        },
      },
    ]);
    assert.deepEqual(byFlag.client.resolutions[0].resolution, {
      decision: 'failed',
      operator: 'alice',
      reason: 'never sent',
    });
  });

  it('resolve signs the hash the action carries now', async () => {
    const client = new FakeClient();
    const changed = requestHash({ operation: 'send-email', to: 'b@example.com', subject: 's' });
    client.actions.set(KEY, snapshot({ requestHash: changed }));
    const r = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.signatures.calls[0].request.requestHash, changed);
    assert.equal(client.submitted[0].claims.requestHash, changed);
  });

  it('resolve exits with the signer’s refusal and sends nothing when the role or tenant is outside the scope', async () => {
    const cases: Array<[string, RegExp]> = [
      [approverOnlyToken, /ops resolve: operator ava lacks the resolver role that resolve needs/],
      [otherTenantToken, /ops resolve: operator gabe is not an operator of tenant acme/],
    ];
    for (const [operatorToken, message] of cases) {
      const r = await run(confirm, { env: { RETRYSAFE_OPERATOR_TOKEN: operatorToken } });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.signatures.calls.length, 1, 'the service was asked');
      assert.equal(r.signatures.calls[0].token, operatorToken);
      nothingSent(r, true);
      assert.equal(r.stdout, '');
    }
  });

  it('resolve passes on the signature source’s own error and exit code, and sends nothing', async () => {
    const cases: Array<[Error, number, RegExp]> = [
      [
        new OpsError('the approval service refused to sign (403): missing role:resolver', 1),
        1,
        /refused to sign \(403\)/,
      ],
      [new UnauthorizedError('the approval service refused the token: revoked'), 3, /refused the token: revoked/],
      [new OpsError('RETRYSAFE_APPROVAL_URL is not set', 2), 2, /RETRYSAFE_APPROVAL_URL is not set/],
    ];
    for (const [error, code, message] of cases) {
      const signatures = new RecordingSignatures();
      signatures.refuseWith = error;
      const r = await run(confirm, { signatures, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, message);
      nothingSent(r, true);
    }
  });

  it('resolve checks arguments before the token', async () => {
    const r = await run(['resolve', KEY, '--decision', 'confirmed', '--reason', 'seen it']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--provider-ref: is required with --decision confirmed/);
    nothingSent(r);
  });

  it('resolve prints a workflow-side refusal and exits 1', async () => {
    const client = new FakeClient();
    client.refuseWith = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      new RetrysafeError(
        'IllegalTransition',
        `action ${KEY} is compensating; only unknown or needs_review actions take a resolution`,
      ).toFailure(),
    );
    client.actions.set(KEY, snapshot({ status: 'compensating' }));
    const r = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /refused the decision \(IllegalTransition\): action .* is compensating; only unknown or needs_review/,
    );
    assert.equal(client.submitted.length, 1);
    assert.deepEqual(client.resolutions, []);
  });

  it('resolve prints a refused signature from the workflow (DecisionRejected) and exits 1', async () => {
    const client = new FakeClient();
    client.refuseWith = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      new RetrysafeError('DecisionRejected', 'operator alice is not an operator of tenant acme', {
        reason: 'missing-tenant',
        missing: 'tenant:acme',
      }).toFailure(),
    );
    const r = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /refused the decision \(DecisionRejected, missing-tenant\): operator alice is not an operator of tenant acme/,
    );
  });

  it('resolve prints the reason of a refusal the client hands over as its typed error', async () => {
    const client = new FakeClient();
    client.refuseWith = new RetrysafeError('DecisionRejected', 'the decision expired at 2026-12-01T10:00:00.000Z', {
      reason: 'expired',
    });
    const r = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused the decision \(DecisionRejected, expired\): the decision expired at/);
  });

  it('resolve refuses a finished action without sending, and an unknown key with exit 1', async () => {
    const client = new FakeClient();
    client.actions.set(KEY, snapshot({ status: 'failed' }));
    const done = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(done.code, 1);
    assert.match(done.stderr, /is failed and finished/);
    nothingSent(done);
    const missing = await run(
      ['resolve', 'send-email:v1:acme:nope', '--decision', 'failed', '--reason', 'never sent'],
      {
        env: { RETRYSAFE_OPERATOR_TOKEN: token },
      },
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no action with key send-email:v1:acme:nope/);
    nothingSent(missing);
  });

  it('resolve stops waiting after --wait and says the decision is pending', async () => {
    const client = new FakeClient();
    client.neverAnswer = true;
    const r = await run([...confirm, '--wait', '1s'], { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /accepted the decision but has not applied it within 1s/);
  });

  it('approve signs the dry run’s request hash as the token’s operator, and reports the outcome', async () => {
    const client = new FakeClient();
    client.actions.set(KEY, snapshot({ status: 'awaiting_confirmation' }));
    const r = await run(['approve', KEY, '--reason', 'customer asked'], {
      client,
      env: { RETRYSAFE_OPERATOR_TOKEN: token },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.signatures.calls[0].request, {
      decision: 'approve',
      key: KEY,
      requestHash: HASH,
      params: { reason: 'customer asked' },
    });
    assert.deepEqual(client.approvals, [{ key: KEY, decision: 'approve', operator: 'alice', requestHash: HASH }]);
    assert.match(
      r.stdout,
      /awaiting_confirmation → confirmed \(approved by alice: customer asked\), provider ref msg_9/,
    );
  });

  it('reject signs a rejection; neither command acts on an action that is not awaiting confirmation', async () => {
    const client = new FakeClient();
    client.actions.set(KEY, snapshot({ status: 'awaiting_confirmation' }));
    const rejected = await run(['reject', KEY, '--json'], { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.equal(JSON.parse(rejected.stdout).after, 'failed');
    assert.equal(client.approvals[0].decision, 'reject');

    const again = await run(['approve', KEY], { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is failed, not awaiting confirmation \(nothing sent\)/);
    assert.equal(again.signatures.calls.length, 0, 'nothing was signed');
  });

  it('approve --hash signs the hash the operator reviewed, which the action refuses once its request is another', async () => {
    const client = new FakeClient();
    client.actions.set(KEY, snapshot({ status: 'awaiting_confirmation' }));
    const reviewed = 'e'.repeat(64);
    const r = await run(['approve', KEY, '--hash', reviewed], { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.signatures.calls[0].request.requestHash, reviewed);
    assert.equal(r.code, 1, 'refused: the action carries another request');
    assert.equal(client.approvals.length, 0);
    const bad = await run(['approve', KEY, '--hash', 'abc'], { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--hash: must be the 64 hex digits/);
  });

  it('sends a real token only to a configured approval service; the default URL is for the demo token', async () => {
    const signatures = approvalServiceSignatures({});
    await assert.rejects(
      signatures.sign('rso_real', { decision: 'approve', key: KEY, requestHash: HASH }),
      (err: unknown) => err instanceof OpsError && /RETRYSAFE_APPROVAL_URL is not set/.test(err.message),
    );
  });

  it('approve without a token exits 3, and with a bad key or flag exits 2, before connecting', async () => {
    const noToken = await run(['approve', KEY]);
    assert.equal(noToken.code, 3);
    assert.equal(noToken.connects, 0);
    const badKey = await run(['approve', 'nope'], { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(badKey.code, 2);
    const waitOnReject = await run(['reject', KEY, '--wait', '10s'], { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(waitOnReject.code, 2);
    assert.equal(badKey.connects + waitOnReject.connects, 0);
  });

  it('approve falls back to the demo operator’s token that npm start keeps beside the operators file', async () => {
    const demoDir = await mkdtemp(path.join(os.tmpdir(), 'ops-demo-'));
    try {
      const file = path.join(demoDir, 'operators.json');
      const demo = await addOperator(file, 'demo');
      await writeFile(path.join(demoDir, 'demo-operator.token'), `${demo.token}\n`);
      const client = new FakeClient();
      client.actions.set(KEY, snapshot({ status: 'awaiting_confirmation' }));
      const r = await run(['approve', KEY], { client, env: { RETRYSAFE_OPERATORS_FILE: file } });
      assert.equal(r.signatures.calls[0]?.token, demo.token, r.stderr);
    } finally {
      await rm(demoDir, { recursive: true, force: true });
    }
  });

  it('show lists the dry run, every provider request with its answer, and how to decide', async () => {
    const client = new FakeClient();
    client.actions.set(
      KEY,
      snapshot({
        status: 'awaiting_confirmation',
        sends: 2,
        requests: [
          { kind: 'send', dispatch: 1, attempt: 1, at: NOW.toISOString(), answer: 'no answer recorded: …' },
          { kind: 'send', dispatch: 1, attempt: 2, at: NOW.toISOString(), answer: 'committed msg_1 (replayed)' },
        ],
        dryRun: {
          key: KEY,
          operation: 'send-email',
          target: 'a***@example.com',
          payload: { to: 'a***@example.com', subject: 's' },
          scope: 'one email',
          summary: 'email',
          policy: {
            mode: 'confirm',
            riskClass: 'customer-message',
            rows: ['email.external'],
            limits: {},
            reasons: ['outside the company'],
            exactPreview: true,
          },
          requestHash: HASH,
          createdAt: NOW.toISOString(),
        },
      }),
    );
    const r = await run(['show', KEY], { client });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /target: +a\*\*\*@example\.com/);
    assert.match(r.stdout, /because: +outside the company/);
    assert.match(r.stdout, /send +no answer recorded/);
    assert.match(r.stdout, /committed msg_1/);
    assert.match(r.stdout, new RegExp(`retrysafe ops approve ${KEY}`));
    assert.match(r.stdout, new RegExp(`retrysafe ops reject ${KEY}`));
  });

  it('prints help per command on stdout and refuses unknown commands with exit 2', async () => {
    for (const name of ['queue', 'show', 'resolve', 'operators']) {
      const r = await run([name, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`^Usage: retrysafe ops ${name}`));
      assert.equal(r.connects, 0);
    }
    const unknown = await run(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /frobnicate: unknown command/);
  });
  it('operators add --tenant acme --role admin writes that scope into the file', async () => {
    const r = await run(['operators', 'add', 'olga', '--tenant', 'acme', '--role', 'admin']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.connects, 0);
    const file = JSON.parse(await readFile(operatorsFile, 'utf8')) as {
      operators: Array<{ name: string; tenants?: string[]; roles?: string[]; addedAt?: string }>;
    };
    const olga = file.operators.find((o) => o.name === 'olga');
    assert.deepEqual(
      { tenants: olga?.tenants, roles: olga?.roles, addedAt: olga?.addedAt },
      { tenants: ['acme'], roles: ['admin'], addedAt: NOW.toISOString() },
    );
    // Others in the file keep their scope.
    assert.deepEqual(file.operators.find((o) => o.name === 'ava')?.roles, ['approver']);
  });

  it('operators add repeats --tenant and --role, and defaults to every tenant, approver and resolver', async () => {
    const many = await run([
      'operators',
      'add',
      'pia',
      '--tenant',
      'acme',
      '--tenant',
      'globex',
      '--role',
      'approver',
      '--role',
      'admin',
    ]);
    assert.equal(many.code, 0, many.stderr);
    const plain = await run(['operators', 'add', 'quinn']);
    assert.equal(plain.code, 0, plain.stderr);
    const ops = (await loadOperatorsFile(operatorsFile)).filter((o) => o.name === 'pia' || o.name === 'quinn');
    assert.deepEqual(
      ops.map((o) => [o.name, o.tenants, o.roles]),
      [
        ['pia', ['acme', 'globex'], ['approver', 'admin']],
        ['quinn', ['*'], ['approver', 'resolver']],
      ],
    );
  });

  it('operators add NAME, re-issuing a token, keeps the scope NAME already has', async () => {
    const scoped = await run(['operators', 'add', 'sam', '--tenant', 'acme', '--role', 'approver']);
    assert.equal(scoped.code, 0, scoped.stderr);
    const rotated = await run(['operators', 'add', 'sam']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const sam = (await loadOperatorsFile(operatorsFile)).find((o) => o.name === 'sam');
    assert.deepEqual([sam?.tenants, sam?.roles], [['acme'], ['approver']]);
  });

  it('operators add refuses an unknown role or a malformed tenant with exit 2, writing nothing', async () => {
    const before = await readFile(operatorsFile, 'utf8');
    const role = await run(['operators', 'add', 'rex', '--role', 'owner']);
    assert.equal(role.code, 2);
    assert.match(role.stderr, /--role/);
    const tenant = await run(['operators', 'add', 'rex', '--tenant', 'ac me']);
    assert.equal(tenant.code, 2);
    assert.match(tenant.stderr, /--tenant/);
    assert.equal(await readFile(operatorsFile, 'utf8'), before);
  });

  it('lists runs held by an interlock with the status of what they wait for', async () => {
    const client = new FakeClient();
    client.waiting = [{ workflowId: 'run:acme:e1:fulfillment', waitingOn: KEY, status: 'waiting' }];
    const { stdout } = await run(['waiting', '--json'], { client });
    const rows = JSON.parse(stdout) as Array<{ workflowId: string; waitingOn: string; upstreamStatus: string }>;
    assert.deepEqual(
      rows.map((r) => [r.workflowId, r.waitingOn, r.upstreamStatus]),
      [['run:acme:e1:fulfillment', KEY, client.actions.get(KEY)!.status]],
    );
    const table = await run(['waiting'], { client });
    assert.match(table.stdout, /run:acme:e1:fulfillment/);
  });
});
