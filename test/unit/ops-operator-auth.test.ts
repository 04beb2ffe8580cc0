import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OpsError, UnauthorizedError } from '../../cli/ops/errors';
import {
  addOperator,
  authenticateOperator,
  findOperator,
  hashToken,
  operatorsFilePath,
  readOperatorsFile,
} from '../../cli/ops/operator-auth';

describe('operator token hashing and lookup', () => {
  it('hashes a token to the hex SHA-256 of its UTF-8 bytes', () => {
    assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hashToken('é'), crypto.createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
  });

  it('finds the operator whose digest matches, and nobody for other tokens', () => {
    const operators = [
      { name: 'alice', tokenSha256: hashToken('alice-token') },
      { name: 'bob', tokenSha256: hashToken('bob-token') },
    ];
    assert.equal(findOperator(operators, 'bob-token')?.name, 'bob');
    assert.equal(findOperator(operators, 'alice-token')?.name, 'alice');
    assert.equal(findOperator(operators, 'carol-token'), undefined);
    assert.equal(findOperator(operators, ''), undefined);
    // The digest itself is not a token: knowing the file's content must not be enough.
    assert.equal(findOperator(operators, hashToken('alice-token')), undefined);
    assert.equal(findOperator([], 'alice-token'), undefined);
  });

  it('compares with crypto.timingSafeEqual against every entry, never stopping at the first match', () => {
    const operators = ['a', 'b', 'c'].map((n) => ({ name: n, tokenSha256: hashToken(`${n}-token`) }));
    const original = crypto.timingSafeEqual;
    let calls = 0;
    crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls++;
      return original(a, b);
    }) as typeof crypto.timingSafeEqual;
    try {
      assert.equal(findOperator(operators, 'a-token')?.name, 'a');
    } finally {
      crypto.timingSafeEqual = original;
    }
    assert.equal(calls, operators.length);
  });
});

describe('operators file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ops-auth-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves RETRYSAFE_OPERATORS_FILE, defaulting to .retrysafe/operators.json', () => {
    assert.equal(operatorsFilePath({}, '/srv/app'), '/srv/app/.retrysafe/operators.json');
    assert.equal(operatorsFilePath({ RETRYSAFE_OPERATORS_FILE: 'ops.json' }, '/srv/app'), '/srv/app/ops.json');
    assert.equal(operatorsFilePath({ RETRYSAFE_OPERATORS_FILE: '/etc/rs/ops.json' }, '/srv/app'), '/etc/rs/ops.json');
  });

  it('adds an operator, stores only the digest, and authenticates the printed token', async () => {
    const file = path.join(dir, 'nested', 'operators.json');
    const { token, replaced } = await addOperator(file, 'alice');
    assert.equal(replaced, false);
    assert.match(token, /^rso_[A-Za-z0-9_-]{43}$/);
    const text = await readFile(file, 'utf8');
    assert.ok(!text.includes(token), 'the token itself is never written');
    assert.ok(text.includes(hashToken(token)));
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const env = { RETRYSAFE_OPERATORS_FILE: file };
    assert.equal((await authenticateOperator(env, token)).name, 'alice');
    assert.equal((await authenticateOperator({ ...env, RETRYSAFE_OPERATOR_TOKEN: token }, undefined)).name, 'alice');
  });

  it('gives an existing operator a new token and retires the old one, keeping the others', async () => {
    const file = path.join(dir, 'rotate.json');
    const first = await addOperator(file, 'alice');
    const bob = await addOperator(file, 'bob');
    const second = await addOperator(file, 'alice');
    assert.equal(second.replaced, true);
    const env = { RETRYSAFE_OPERATORS_FILE: file };
    await assert.rejects(authenticateOperator(env, first.token), UnauthorizedError);
    assert.equal((await authenticateOperator(env, second.token)).name, 'alice');
    assert.equal((await authenticateOperator(env, bob.token)).name, 'bob');
    assert.deepEqual(
      (await readOperatorsFile(file))?.operators.map((o) => o.name),
      ['alice', 'bob'],
    );
  });

  it('refuses a missing token, an unknown token and a missing file with exit 3', async () => {
    const file = path.join(dir, 'refuse.json');
    await addOperator(file, 'alice');
    const env = { RETRYSAFE_OPERATORS_FILE: file };
    const unauthorized = (pattern: RegExp) => (err: unknown) =>
      err instanceof UnauthorizedError && err.exitCode === 3 && pattern.test(err.message);
    await assert.rejects(
      authenticateOperator(env, undefined),
      unauthorized(/RETRYSAFE_OPERATOR_TOKEN or pass --operator-token/),
    );
    await assert.rejects(authenticateOperator(env, ''), unauthorized(/required/));
    await assert.rejects(authenticateOperator(env, 'guess'), unauthorized(/not listed/));
    await assert.rejects(
      authenticateOperator({ RETRYSAFE_OPERATORS_FILE: path.join(dir, 'absent.json') }, 'x'),
      unauthorized(/no operators file .* operators add NAME/),
    );
  });

  it('reports a malformed file by path and field instead of treating it as empty', async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ operators: [{ name: 'alice', tokenSha256: 'not-hex' }] }));
    await assert.rejects(
      readOperatorsFile(file),
      (err: unknown) => err instanceof OpsError && /operators\.0\.tokenSha256/.test(err.message),
    );
    await writeFile(file, '{ nope');
    await assert.rejects(readOperatorsFile(file), /is not JSON/);
    const dup = hashToken('x');
    await writeFile(
      file,
      JSON.stringify({
        operators: [
          { name: 'a', tokenSha256: dup },
          { name: 'a', tokenSha256: hashToken('y') },
        ],
      }),
    );
    await assert.rejects(readOperatorsFile(file), /listed twice/);
  });

  it('accepts hand-written upper-case digests', async () => {
    const file = path.join(dir, 'upper.json');
    await writeFile(
      file,
      JSON.stringify({ operators: [{ name: 'carol', tokenSha256: hashToken('carol-token').toUpperCase() }] }),
    );
    assert.equal((await authenticateOperator({ RETRYSAFE_OPERATORS_FILE: file }, 'carol-token')).name, 'carol');
  });
});
