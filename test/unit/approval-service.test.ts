import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_APPROVAL_TTL_MS, verifyApproval, type SignedApproval } from '../../policies/approval';
import { requestHash } from '../../policies/request-hash';
import { startApprovalServer, type ApprovalServer, type SignedEvent } from '../../scripts/lib/approval-http';
import { generateApprovalKeyPair } from '../../scripts/lib/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  loadOperatorsFile,
  parseOperatorsFile,
  type ApprovalSigner,
} from '../../scripts/lib/approval-signer';

const KEY = 'charge:v1:acme:renewal-2026-08-28-01';
const HASH = requestHash({ operation: 'charge', amountCents: 7_000 });
const ALICE_TOKEN = 'alice-token-8f3e1c0b7d2a4e6f9a1b3c5d7e9f0a2b';
const BOB_TOKEN = 'bob-token-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d';
const NOW = Date.parse('2026-08-28T10:00:00.000Z');
const keys = generateApprovalKeyPair();
const operators = [
  { name: 'alice', tokenSha256: hashOperatorToken(ALICE_TOKEN) },
  { name: 'bob', tokenSha256: hashOperatorToken(BOB_TOKEN) },
];

async function post(
  url: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${url}/approvals`, {
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
    assert.equal(approval.claims.approver, 'alice');
    assert.equal(approval.claims.expiresAt, new Date(NOW + DEFAULT_APPROVAL_TTL_MS).toISOString());
    assert.equal(approval.publicKeyId, keys.keyId);
    assert.throws(
      () =>
        signer.sign(
          { name: 'mallory', tokenSha256: '0'.repeat(64) },
          { key: KEY, requestHash: HASH, decision: 'approve' },
        ),
      /authenticated operator/,
    );
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
    const approval = res.json as unknown as SignedApproval;
    assert.equal(approval.claims.approver, 'alice');

    const pub = (await (await fetch(`${server.url}/public-key`)).json()) as { keyId: string; publicKey: string };
    assert.deepEqual(pub, { keyId: keys.keyId, publicKey: keys.publicKeyHex });
    const claims = verifyApproval(
      approval,
      { key: KEY, requestHash: HASH },
      { [pub.keyId]: pub.publicKey },
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

  it('takes the approver from the token, never from the body', async () => {
    const asBob = await post(server.url, { ...body, decision: 'reject' }, BOB_TOKEN);
    assert.equal(asBob.status, 200);
    assert.equal((asBob.json as unknown as SignedApproval).claims.approver, 'bob');

    const spoofed = await post(server.url, { ...body, approver: 'alice' }, BOB_TOKEN);
    assert.equal(spoofed.status, 400);
    assert.equal(spoofed.json.field, 'approver');
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
    const { claims } = res.json as unknown as SignedApproval;
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
  const cli = path.resolve(__dirname, '../../scripts/approval-service.ts');
  const tsx = path.resolve(__dirname, '../../node_modules/.bin/tsx');

  it('keygen prints a usable key pair, and sign prints an approval from the operator token', async () => {
    const generated = JSON.parse((await run(tsx, [cli, 'keygen'])).stdout) as {
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
      [cli, 'sign', '--key', KEY, '--hash', HASH, '--decision', 'approve', '--operator-token', BOB_TOKEN],
      { env },
    );
    const approval = JSON.parse(stdout) as SignedApproval;
    assert.equal(approval.claims.approver, 'bob');
    verifyApproval(approval, { key: KEY, requestHash: HASH }, { [generated.keyId]: generated.publicKey }, Date.now());

    await assert.rejects(
      run(tsx, [cli, 'sign', '--key', KEY, '--hash', HASH, '--decision', 'approve', '--operator-token', 'wrong'], {
        env,
      }),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /not recognized/.test(err.stderr ?? ''),
    );
    await assert.rejects(
      run(tsx, [cli, 'sign', '--key', KEY, '--hash', 'abc', '--decision', 'approve', '--operator-token', BOB_TOKEN], {
        env,
      }),
      (err: { code?: number; stderr?: string }) => err.code === 2 && /^--hash: /.test(err.stderr ?? ''),
    );
  });
});
