import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  DECISIONS,
  DEFAULT_APPROVAL_TTL_MS,
  ROLE_FOR,
  decisionParams,
  verifyDecision,
  type Decision,
  type DecisionClaims,
  type ExpectedDecision,
  type Role,
  type SignedDecision,
} from '../../policies/signed-decision';
import { RetrysafeError } from '../../policies/errors';
import { requestHash } from '../../policies/request-hash';
import { startApprovalServer, type ApprovalServer, type SignedEvent } from '../../cli/approvals/approval-http';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  loadOperatorsFile,
  operatorScopesOf,
  parseOperatorsFile,
  tenantOfTarget,
  type ApprovalSigner,
} from '../../cli/approvals/approval-signer';
import { runOps } from '../../cli/ops/cli';
import type { OpsContext } from '../../cli/ops/context';

const KEY = 'charge:v1:acme:renewal-2026-08-28-01';
const GLOBEX_KEY = 'charge:v1:globex:renewal-2026-08-28-01';
const RUN = 'run:acme:renewal-2026-08-28-01';
const GLOBEX_RUN = 'run:globex:renewal-2026-08-28-01';
const HASH = requestHash({ operation: 'charge', amountCents: 7_000 });
const ALICE_TOKEN = 'alice-token-8f3e1c0b7d2a4e6f9a1b3c5d7e9f0a2b';
const BOB_TOKEN = 'bob-token-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d';
const GABE_TOKEN = 'gabe-token-9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b';
const NOBODY_TOKEN = 'nobody-token-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const NOW = Date.parse('2026-08-28T10:00:00.000Z');
const keys = generateApprovalKeyPair();
type OperatorEntry = { name: string; tokenSha256: string; tenants: string[]; roles: Role[] };
const operators = [
  /** Approves and resolves on acme only. */
  { name: 'alice', tokenSha256: hashOperatorToken(ALICE_TOKEN), tenants: ['acme'], roles: ['approver', 'resolver'] },
  /** Approves on every tenant; nothing else. */
  { name: 'bob', tokenSha256: hashOperatorToken(BOB_TOKEN), tenants: ['*'], roles: ['approver'] },
] satisfies OperatorEntry[];
/** Every role, on globex only. */
const gabe = {
  name: 'gabe',
  tokenSha256: hashOperatorToken(GABE_TOKEN),
  tenants: ['globex'],
  roles: ['approver', 'resolver', 'admin'],
} satisfies OperatorEntry;
/** Listed without a scope: the defaults, which let it decide nothing. */
const nobody = { name: 'nobody', tokenSha256: hashOperatorToken(NOBODY_TOKEN) };
const TRUST = {
  keys: { [keys.keyId]: keys.publicKeyHex },
  operators: operatorScopesOf(parseOperatorsFile({ operators })),
};
const APPROVE_EXPECTED: ExpectedDecision = {
  decisions: ['approve', 'reject'],
  key: KEY,
  tenant: 'acme',
  requestHash: HASH,
};
const RESOLVE_PARAMS = { outcome: 'confirmed', providerRef: 'msg_1', reason: 'seen in provider dashboard' };

/** A well-formed signing request for `decision` on `target` (an action key or a run ID). */
function requestFor(decision: Decision, target: string): Record<string, unknown> {
  const onAction = !target.startsWith('run:');
  const params: Record<Decision, Record<string, unknown>> = {
    approve: {},
    reject: { reason: 'amount looks wrong' },
    resolve: RESOLVE_PARAMS,
    'accept-risk': { reason: 'known customer' },
    'raise-ceiling': { ceiling: 'charges', newLimit: 5, reason: 'approved by finance' },
    resume: { reason: 'provider is back' },
    cancel: { reason: 'customer asked to stop' },
  };
  return { decision, key: target, ...(onAction ? { requestHash: HASH } : {}), params: params[decision] };
}

/** The refusal `fn` throws: DecisionRejected with `reason` and `details.missing`. */
function scopeRefusal(fn: () => unknown, reason: 'missing-role' | 'missing-tenant', missing: string): RetrysafeError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof RetrysafeError, `expected DecisionRejected (${reason}), got ${String(caught)}`);
  assert.equal(caught.code, 'DecisionRejected');
  assert.equal(caught.details.reason, reason, caught.message);
  assert.equal(caught.details.missing, missing, caught.message);
  return caught;
}

async function post(
  url: string,
  body: unknown,
  token?: string,
  route = '/approvals',
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('approval signer', () => {
  const signer = createApprovalSigner({
    privateKeyHex: keys.privateKeyHex,
    keyId: keys.keyId,
    operators,
    clock: () => NOW,
  });

  it('authenticates each operator by token and nobody else', () => {
    assert.equal(signer.authenticate(ALICE_TOKEN)?.name, 'alice');
    assert.equal(signer.authenticate(BOB_TOKEN)?.name, 'bob');
    for (const bad of [
      undefined,
      '',
      'alice',
      ALICE_TOKEN.toUpperCase(),
      `${ALICE_TOKEN} `,
      hashOperatorToken(ALICE_TOKEN),
      'x'.repeat(5000),
    ]) {
      assert.equal(signer.authenticate(bad), undefined, String(bad).slice(0, 20));
    }
  });

  it('signs as the operator, with the default TTL, and never for an unlisted operator', () => {
    const approval = signer.sign(signer.authenticate(ALICE_TOKEN)!, {
      key: KEY,
      requestHash: HASH,
      decision: 'approve',
    });
    assert.equal(approval.claims.operator, 'alice');
    assert.equal(approval.claims.tenant, 'acme');
    assert.equal(approval.claims.expiresAt, new Date(NOW + DEFAULT_APPROVAL_TTL_MS).toISOString());
    assert.equal(approval.publicKeyId, keys.keyId);
    assert.throws(
      () =>
        signer.sign(
          { name: 'mallory', tokenSha256: '0'.repeat(64), tenants: ['*'], roles: ['approver'] },
          { key: KEY, requestHash: HASH, decision: 'approve' },
        ),
      /authenticated operator/,
    );
    // A listed name with someone else's digest is not that operator either.
    assert.throws(
      () =>
        signer.sign(
          { name: 'alice', tokenSha256: operators[1].tokenSha256, tenants: ['*'], roles: ['approver'] },
          { key: KEY, requestHash: HASH, decision: 'approve' },
        ),
      /authenticated operator/,
    );
  });

  it('derives the tenant from the key and binds the request hash and parameters into the claims', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    const resolution = signer.sign(alice, requestFor('resolve', KEY));
    assert.equal(resolution.claims.tenant, tenantOfTarget(KEY));
    assert.equal(resolution.claims.requestHash, HASH);
    assert.deepEqual(resolution.claims.params, RESOLVE_PARAMS);
    const claims = verifyDecision(
      resolution,
      { decisions: ['resolve'], key: KEY, tenant: 'acme', requestHash: HASH },
      TRUST,
      NOW + 1_000,
    );
    assert.deepEqual(decisionParams({ ...claims, decision: 'resolve' }), RESOLVE_PARAMS);
  });

  it('refuses to sign for a role outside the operator’s scope, naming the missing role', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    const bob = signer.authenticate(BOB_TOKEN)!;
    // alice approves and resolves, but may not steer runs.
    for (const decision of ['raise-ceiling', 'resume', 'cancel'] as const) {
      scopeRefusal(() => signer.sign(alice, requestFor(decision, RUN)), 'missing-role', 'role:admin');
    }
    // bob only approves: on every tenant, but never resolves.
    scopeRefusal(() => signer.sign(bob, requestFor('resolve', KEY)), 'missing-role', 'role:resolver');
    scopeRefusal(() => signer.sign(bob, requestFor('accept-risk', RUN)), 'missing-role', 'role:resolver');
    assert.equal(signer.sign(bob, requestFor('approve', GLOBEX_KEY)).claims.tenant, 'globex');
  });

  it('refuses to sign for a tenant outside the operator’s scope, naming the missing tenant', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    scopeRefusal(() => signer.sign(alice, requestFor('approve', GLOBEX_KEY)), 'missing-tenant', 'tenant:globex');
    scopeRefusal(() => signer.sign(alice, requestFor('resolve', GLOBEX_KEY)), 'missing-tenant', 'tenant:globex');
    scopeRefusal(() => signer.sign(alice, requestFor('accept-risk', GLOBEX_RUN)), 'missing-tenant', 'tenant:globex');
    // The body cannot name another tenant to get around it.
    assert.throws(
      () => signer.sign(alice, { ...requestFor('approve', GLOBEX_KEY), tenant: 'acme' }),
      (err: RetrysafeError) => err.code === 'InvalidIntent' && err.details.field === 'tenant',
    );
  });

  it('never signs, for any decision, on a tenant a "*"-less operator does not list', () => {
    const scoped = createApprovalSigner({
      privateKeyHex: keys.privateKeyHex,
      keyId: keys.keyId,
      operators: [...operators, gabe],
      clock: () => NOW,
    });
    const g = scoped.authenticate(GABE_TOKEN)!;
    for (const decision of DECISIONS) {
      for (const target of [
        'run:acme:e1',
        'charge:v1:acme:e1',
        'charge:v1:initech:e1:step-2',
        'run:initech:e1:agent',
      ]) {
        const onAction = !target.startsWith('run:');
        if ((decision === 'approve' || decision === 'reject' || decision === 'resolve') !== onAction) continue;
        const tenant = tenantOfTarget(target);
        scopeRefusal(() => scoped.sign(g, requestFor(decision, target)), 'missing-tenant', `tenant:${tenant}`);
      }
      // On its own tenant every decision is signed (gabe holds every role).
      const own = decision === 'approve' || decision === 'reject' || decision === 'resolve' ? GLOBEX_KEY : GLOBEX_RUN;
      assert.equal(scoped.sign(g, requestFor(decision, own)).claims.decision, decision);
    }
  });

  it('uses the scope in its operators file, not the one on the operator object it is handed', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    const inflated = { ...alice, tenants: ['*'], roles: ['approver' as const, 'resolver' as const, 'admin' as const] };
    scopeRefusal(() => signer.sign(inflated, requestFor('approve', GLOBEX_KEY)), 'missing-tenant', 'tenant:globex');
    scopeRefusal(() => signer.sign(inflated, requestFor('cancel', RUN)), 'missing-role', 'role:admin');
  });

  it('lets an operator listed without tenants or roles sign nothing', () => {
    const withDefaults = createApprovalSigner({
      privateKeyHex: keys.privateKeyHex,
      keyId: keys.keyId,
      operators: [...operators, nobody],
      clock: () => NOW,
    });
    const n = withDefaults.authenticate(NOBODY_TOKEN)!;
    assert.deepEqual([n.tenants, n.roles], [[], []]);
    for (const decision of DECISIONS) {
      const target = decision === 'approve' || decision === 'reject' || decision === 'resolve' ? KEY : RUN;
      scopeRefusal(
        () => withDefaults.sign(n, requestFor(decision, target)),
        'missing-role',
        `role:${ROLE_FOR[decision]}`,
      );
    }
  });

  it('requires the request hash for a decision on an action, and takes none for a run', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    const { requestHash: _hash, ...noHash } = requestFor('resolve', KEY);
    assert.throws(
      () => signer.sign(alice, noHash),
      (err: RetrysafeError) => err.code === 'InvalidIntent' && err.details.field === 'requestHash',
    );
    const scoped = createApprovalSigner({
      privateKeyHex: keys.privateKeyHex,
      keyId: keys.keyId,
      operators: [...operators, gabe],
      clock: () => NOW,
    });
    const cancel = scoped.sign(scoped.authenticate(GABE_TOKEN)!, requestFor('cancel', GLOBEX_RUN));
    assert.equal(cancel.claims.requestHash, undefined);
    assert.equal(cancel.claims.key, GLOBEX_RUN);
  });

  it('uses a fresh nonce per approval', () => {
    const alice = signer.authenticate(ALICE_TOKEN)!;
    const a = signer.sign(alice, { key: KEY, requestHash: HASH, decision: 'approve' });
    const b = signer.sign(alice, { key: KEY, requestHash: HASH, decision: 'approve' });
    assert.notEqual(a.claims.nonce, b.claims.nonce);
  });

  it('validates the operators file, naming the field', () => {
    assert.throws(() => parseOperatorsFile({ operators: [] }), /operators: must list at least one operator/);
    assert.throws(
      () => parseOperatorsFile({ operators: [{ name: 'alice', token: 'x' }] }),
      /operators\.0\.(tokenSha256|token)/,
    );
    assert.throws(
      () => parseOperatorsFile({ operators: [{ name: 'alice', tokenSha256: 'ABC' }] }),
      /operators\.0\.tokenSha256/,
    );
    assert.throws(
      () => parseOperatorsFile({ operators: [...operators, { name: 'alice', tokenSha256: '1'.repeat(64) }] }),
      /operators\.2\.name: alice is listed twice/,
    );
    assert.throws(
      () => parseOperatorsFile({ operators: [...operators, { name: 'carol', tokenSha256: operators[0].tokenSha256 }] }),
      /operators\.2\.tokenSha256/,
    );
  });

  it('loads the operators file with its path in errors', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-operators-'));
    const file = path.join(dir, 'operators.json');
    await writeFile(file, JSON.stringify({ operators }));
    assert.deepEqual(await loadOperatorsFile(file), operators);
    await writeFile(file, JSON.stringify({ operators: [nobody] }));
    assert.deepEqual(await loadOperatorsFile(file), [{ ...nobody, tenants: [], roles: [] }]);
    await writeFile(file, JSON.stringify({ operators: [{ ...operators[0], roles: ['owner'] }] }));
    await assert.rejects(loadOperatorsFile(file), (err: Error) =>
      err.message.startsWith(`${file}: operators.0.roles.0`),
    );
    await writeFile(file, JSON.stringify({ operators: [{ ...operators[0], tenants: ['ac me'] }] }));
    await assert.rejects(loadOperatorsFile(file), (err: Error) =>
      err.message.startsWith(`${file}: operators.0.tenants.0`),
    );
    await writeFile(file, JSON.stringify({ operators: [{ name: 'alice' }] }));
    await assert.rejects(loadOperatorsFile(file), (err: Error) =>
      err.message.startsWith(`${file}: operators.0.tokenSha256`),
    );
  });
});

describe('approval service over HTTP', () => {
  let signer: ApprovalSigner;
  let server: ApprovalServer;
  const signedEvents: SignedEvent[] = [];

  before(async () => {
    signer = createApprovalSigner({ privateKeyHex: keys.privateKeyHex, keyId: keys.keyId, operators });
    server = await startApprovalServer(signer, { port: 0, onSigned: (e) => signedEvents.push(e) });
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });
  after(() => server.close());

  const body = { key: KEY, requestHash: HASH, decision: 'approve' };

  it('refuses a request without a token with 401', async () => {
    const res = await post(server.url, body);
    assert.equal(res.status, 401);
    assert.equal(res.json.error, 'unauthorized');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  it('refuses a wrong token, or a token not sent as Bearer, with 401', async () => {
    assert.equal((await post(server.url, body, 'not-a-token')).status, 401);
    const basic = await fetch(`${server.url}/approvals`, {
      method: 'POST',
      headers: { authorization: `Basic ${ALICE_TOKEN}` },
      body: JSON.stringify(body),
    });
    assert.equal(basic.status, 401);
    await basic.body?.cancel();
  });

  it('returns an approval that verifies with the service public key, signed as the token owner', async () => {
    const res = await post(server.url, body, ALICE_TOKEN);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const approval = res.json as unknown as SignedDecision;
    assert.equal(approval.claims.operator, 'alice');

    const pub = (await (await fetch(`${server.url}/public-key`)).json()) as { keyId: string; publicKey: string };
    assert.deepEqual(pub, { keyId: keys.keyId, publicKey: keys.publicKeyHex });
    const claims = verifyDecision(
      approval,
      APPROVE_EXPECTED,
      { keys: { [pub.keyId]: pub.publicKey }, operators: TRUST.operators },
      Date.now(),
    );
    assert.equal(claims.decision, 'approve');
    assert.deepEqual(signedEvents.at(-1), {
      operator: 'alice',
      key: KEY,
      decision: 'approve',
      keyId: keys.keyId,
      expiresAt: claims.expiresAt,
    });
  });

  it('takes the operator from the token, never from the body', async () => {
    const asBob = await post(server.url, { ...body, decision: 'reject' }, BOB_TOKEN);
    assert.equal(asBob.status, 200);
    assert.equal((asBob.json as unknown as SignedDecision).claims.operator, 'bob');

    for (const field of ['approver', 'operator']) {
      const spoofed = await post(server.url, { ...body, [field]: 'alice' }, BOB_TOKEN);
      assert.equal(spoofed.status, 400, field);
      assert.equal(spoofed.json.field, field);
      assert.match(String(spoofed.json.message), /not accepted; the operator is the one the token belongs to/);
      const onDecisions = await post(server.url, { ...body, [field]: 'alice' }, BOB_TOKEN, '/decisions');
      assert.equal(onDecisions.status, 400, field);
      assert.equal(onDecisions.json.field, field);
    }
  });

  it('takes the tenant from the key, never from the body', async () => {
    const spoofed = await post(server.url, { ...body, key: GLOBEX_KEY, tenant: 'acme' }, ALICE_TOKEN, '/decisions');
    assert.equal(spoofed.status, 400);
    assert.equal(spoofed.json.field, 'tenant');
    assert.match(String(spoofed.json.message), /not accepted; the tenant is the key's/);
    const asBob = await post(server.url, { ...body, key: GLOBEX_KEY }, BOB_TOKEN, '/decisions');
    assert.equal(asBob.status, 200, JSON.stringify(asBob.json));
    assert.equal((asBob.json as unknown as SignedDecision).claims.tenant, 'globex');
  });

  it('signs any decision on POST /decisions, with its parameters covered by the signature', async () => {
    const res = await post(server.url, requestFor('resolve', KEY), ALICE_TOKEN, '/decisions');
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const signed = res.json as unknown as SignedDecision;
    const claims: DecisionClaims = verifyDecision(
      signed,
      { decisions: ['resolve'], key: KEY, tenant: 'acme', requestHash: HASH },
      TRUST,
      Date.now(),
    );
    assert.deepEqual([claims.decision, claims.operator, claims.params], ['resolve', 'alice', RESOLVE_PARAMS]);
    assert.deepEqual(signedEvents.at(-1), {
      operator: 'alice',
      key: KEY,
      decision: 'resolve',
      keyId: keys.keyId,
      expiresAt: claims.expiresAt,
    });
  });

  it('answers 403 naming what is missing when the decision is outside the operator’s scope', async () => {
    const events = signedEvents.length;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [requestFor('resolve', KEY), BOB_TOKEN, 'role:resolver'],
      [requestFor('cancel', RUN), ALICE_TOKEN, 'role:admin'],
      [requestFor('approve', GLOBEX_KEY), ALICE_TOKEN, 'tenant:globex'],
      [requestFor('resolve', GLOBEX_KEY), ALICE_TOKEN, 'tenant:globex'],
    ];
    for (const [request, token, missing] of cases) {
      for (const route of ['/decisions', '/approvals']) {
        const res = await post(server.url, request, token, route);
        assert.equal(res.status, 403, `${route} ${JSON.stringify(request)} → ${JSON.stringify(res.json)}`);
        assert.equal(res.json.missing, missing);
        assert.equal(res.json.error, 'forbidden');
        assert.equal(res.json.claims, undefined, 'nothing signed comes back');
        assert.equal(res.json.signature, undefined, 'nothing signed comes back');
      }
    }
    assert.equal(signedEvents.length, events, 'no refused request is logged as signed');
  });

  it('names the bad field with 400', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...body, requestHash: 'abc' }, 'requestHash'],
      [{ ...body, decision: 'maybe' }, 'decision'],
      [{ ...body, key: 'not a key' }, 'key'],
      [{ ...body, ttlSeconds: 7_200 }, 'ttlSeconds'],
      [{ ...body, ttlSeconds: 1.5 }, 'ttlSeconds'],
      [{ key: KEY, decision: 'approve' }, 'requestHash'],
      [{ ...body, confirmed: true }, 'confirmed'],
      ['{"key":', '(body)'],
      [[body], '(body)'],
    ];
    for (const [b, field] of cases) {
      const res = await post(server.url, b, ALICE_TOKEN);
      assert.equal(res.status, 400, `${JSON.stringify(b)} → ${res.status}`);
      assert.equal(res.json.field, field, JSON.stringify(res.json));
      assert.ok(String(res.json.message).startsWith(`${field}: `), String(res.json.message));
    }
  });

  it('honours a shorter TTL', async () => {
    const res = await post(server.url, { ...body, ttlSeconds: 60 }, ALICE_TOKEN);
    const { claims } = res.json as unknown as SignedDecision;
    assert.equal(Date.parse(claims.expiresAt) - Date.parse(claims.issuedAt), 60_000);
  });

  it('refuses an oversized body with 413 and unknown routes with 404/405', async () => {
    assert.equal((await post(server.url, { ...body, pad: 'x'.repeat(20_000) }, ALICE_TOKEN)).status, 413);
    const notFound = await fetch(`${server.url}/nope`);
    assert.equal(notFound.status, 404);
    await notFound.body?.cancel();
    const wrongMethod = await fetch(`${server.url}/approvals`);
    assert.equal(wrongMethod.status, 405);
    await wrongMethod.body?.cancel();
  });
});

describe('approval service CLI', () => {
  const run = promisify(execFile);
  const cli = path.resolve(__dirname, '../../cli/main.ts');
  const tsx = path.resolve(__dirname, '../../node_modules/.bin/tsx');

  it('keygen prints a usable key pair, and sign prints an approval from the operator token', async () => {
    const generated = JSON.parse((await run(tsx, [cli, 'approvals', 'keygen'])).stdout) as {
      keyId: string;
      publicKey: string;
      privateKey: string;
    };
    assert.match(generated.privateKey, /^[0-9a-f]{64}$/);

    const dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-approval-cli-'));
    const file = path.join(dir, 'operators.json');
    await writeFile(file, JSON.stringify({ operators }));
    const env = {
      ...process.env,
      RETRYSAFE_OPERATORS_FILE: file,
      RETRYSAFE_APPROVAL_SIGNING_KEY: generated.privateKey,
      RETRYSAFE_APPROVAL_KEY_ID: generated.keyId,
    };
    const { stdout } = await run(
      tsx,
      [cli, 'approvals', 'sign', '--key', KEY, '--hash', HASH, '--decision', 'approve', '--operator-token', BOB_TOKEN],
      { env },
    );
    const approval = JSON.parse(stdout) as SignedDecision;
    assert.equal(approval.claims.operator, 'bob');
    verifyDecision(
      approval,
      APPROVE_EXPECTED,
      { keys: { [generated.keyId]: generated.publicKey }, operators: TRUST.operators },
      Date.now(),
    );

    await assert.rejects(
      run(
        tsx,
        [cli, 'approvals', 'sign', '--key', KEY, '--hash', HASH, '--decision', 'approve', '--operator-token', 'wrong'],
        {
          env,
        },
      ),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /not recognized/.test(err.stderr ?? ''),
    );
    await assert.rejects(
      run(
        tsx,
        [
          cli,
          'approvals',
          'sign',
          '--key',
          KEY,
          '--hash',
          'abc',
          '--decision',
          'approve',
          '--operator-token',
          BOB_TOKEN,
        ],
        {
          env,
        },
      ),
      (err: { code?: number; stderr?: string }) => err.code === 2 && /^--hash: /.test(err.stderr ?? ''),
    );
  });
});

describe('operators files written by `ops operators add`', () => {
  /** Runs `ops operators add …` against `file` and returns the token it printed. */
  async function opsAdd(file: string, args: string[]): Promise<string> {
    const out: string[] = [];
    const err: string[] = [];
    const ctx: OpsContext = {
      env: { RETRYSAFE_OPERATORS_FILE: file },
      out: (t) => out.push(t),
      warn: (t) => err.push(t),
      now: () => new Date(NOW),
      client: () => Promise.reject(new Error('operators add must not connect')),
      signatures: { sign: () => Promise.reject(new Error('operators add must not sign')) },
      ledger: () => Promise.reject(new Error('operators add must not open the ledger')),
    };
    const code = await runOps(['operators', 'add', ...args, '--json'], ctx, (line) => err.push(line));
    assert.equal(code, 0, err.join('\n'));
    return (JSON.parse(out.join('\n')) as { token: string }).token;
  }

  it('are accepted by the approval service, with their scopes and addedAt, and sign within them', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-ops-operators-'));
    const file = path.join(dir, 'operators.json');
    const carolToken = await opsAdd(file, ['carol']);
    const daveToken = await opsAdd(file, ['dave', '--tenant', 'acme', '--tenant', 'initech', '--role', 'admin']);

    const loaded = await loadOperatorsFile(file);
    assert.deepEqual(
      loaded.map((o) => [o.name, o.tenants, o.roles, o.addedAt]),
      [
        ['carol', ['*'], ['approver', 'resolver'], new Date(NOW).toISOString()],
        ['dave', ['acme', 'initech'], ['admin'], new Date(NOW).toISOString()],
      ],
    );
    assert.deepEqual(operatorScopesOf(loaded), {
      carol: { tenants: ['*'], roles: ['approver', 'resolver'] },
      dave: { tenants: ['acme', 'initech'], roles: ['admin'] },
    });

    const signer = createApprovalSigner({
      privateKeyHex: keys.privateKeyHex,
      keyId: keys.keyId,
      operators: loaded,
      clock: () => NOW,
    });
    const carol = signer.authenticate(carolToken)!;
    const dave = signer.authenticate(daveToken)!;
    assert.deepEqual([carol?.name, dave?.name], ['carol', 'dave']);
    assert.equal(signer.sign(carol, requestFor('resolve', GLOBEX_KEY)).claims.operator, 'carol');
    scopeRefusal(() => signer.sign(carol, requestFor('cancel', RUN)), 'missing-role', 'role:admin');
    assert.equal(signer.sign(dave, requestFor('cancel', RUN)).claims.operator, 'dave');
    scopeRefusal(() => signer.sign(dave, requestFor('cancel', GLOBEX_RUN)), 'missing-tenant', 'tenant:globex');
    scopeRefusal(() => signer.sign(dave, requestFor('approve', KEY)), 'missing-role', 'role:approver');
  });

  it('stay accepted after a token is re-issued, and the old token stops working', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-ops-operators-'));
    const file = path.join(dir, 'operators.json');
    const first = await opsAdd(file, ['erin', '--tenant', 'acme', '--role', 'resolver']);
    const second = await opsAdd(file, ['erin', '--tenant', 'acme', '--role', 'resolver']);
    const loaded = await loadOperatorsFile(file);
    assert.equal(loaded.length, 1);
    const signer = createApprovalSigner({ privateKeyHex: keys.privateKeyHex, operators: loaded });
    assert.equal(signer.authenticate(first), undefined);
    assert.equal(signer.authenticate(second)?.name, 'erin');
  });
});
