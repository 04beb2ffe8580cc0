import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { operatorScopesReader } from '../../workers/operators-file';
import { createApprovalSigner, loadOperatorsFile } from '../../cli/approvals/approval-signer';
import { addOperator, readOperatorsFile as readOpsOperatorsFile } from '../../cli/ops/operator-auth';

describe("the worker's operators file reader", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'operators-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads scopes (digests ignored), and sees a change to the file without a restart', async () => {
    const file = path.join(dir, 'operators.json');
    const entry = { name: 'alice', tokenSha256: 'a'.repeat(64), tenants: ['acme'], roles: ['approver'] };
    await writeFile(file, JSON.stringify({ operators: [entry] }));
    const read = operatorScopesReader(file);
    assert.deepEqual(await read(), { alice: { tenants: ['acme'], roles: ['approver'] } });
    assert.equal(await read(), await read(), 'an unchanged file is not parsed again');
    await writeFile(file, JSON.stringify({ operators: [{ ...entry, roles: ['approver', 'resolver'] }] }));
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    assert.deepEqual(await read(), { alice: { tenants: ['acme'], roles: ['approver', 'resolver'] } });
  });

  it('names the file and the field of a bad entry', async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({ operators: [{ name: 'bob', tokenSha256: 'b'.repeat(64), roles: ['owner'] }] }),
    );
    await assert.rejects(operatorScopesReader(file)(), /bad\.json: operators\.0\.roles\.0/);
  });
});

/** Moves a file's modification time on, as a later write would (some file systems keep whole seconds). */
async function bump(file: string): Promise<void> {
  const later = new Date(Date.now() + Math.floor(Math.random() * 100_000) + 10_000);
  await utimes(file, later, later);
}

describe('one operators file for every tool', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'operators-shared-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a file written by `ops operators add` is accepted by the approval service and by workers', async () => {
    const file = path.join(dir, 'operators.json');
    const { token } = await addOperator(file, 'alice', new Date('2026-12-01T10:00:00Z'), { tenants: ['acme'] });
    await addOperator(file, 'bob', new Date('2026-12-01T10:05:00Z'), { roles: ['admin'] });
    const operators = await loadOperatorsFile(file);
    assert.deepEqual(
      operators.map((o) => [o.name, o.addedAt]),
      [
        ['alice', '2026-12-01T10:00:00.000Z'],
        ['bob', '2026-12-01T10:05:00.000Z'],
      ],
    );
    const signer = createApprovalSigner({ privateKeyHex: '11'.repeat(32), operators });
    assert.equal(signer.authenticate(token)?.name, 'alice');
    assert.deepEqual(await operatorScopesReader(file)(), {
      alice: { tenants: ['acme'], roles: ['approver', 'resolver'] },
      bob: { tenants: ['*'], roles: ['admin'] },
    });
  });

  it('the approval service sees an operator added, a token replaced or a file broken, without a restart', async () => {
    const file = path.join(dir, 'live.json');
    const first = await addOperator(file, 'alice');
    const reloadErrors: string[] = [];
    const signer = createApprovalSigner({
      privateKeyHex: '22'.repeat(32),
      operators: await loadOperatorsFile(file),
      operatorsFile: file,
      onReloadError: (m) => reloadErrors.push(m),
    });
    assert.equal(signer.authenticate(first.token)?.name, 'alice');
    const session = signer.authenticate(first.token)!;
    const bob = await addOperator(file, 'bob');
    await bump(file);
    assert.equal(signer.authenticate(bob.token)?.name, 'bob', 'added while it runs');
    const replaced = await addOperator(file, 'alice');
    await bump(file);
    assert.equal(signer.authenticate(first.token), undefined, 'the old token stopped working');
    assert.equal(signer.authenticate(replaced.token)?.name, 'alice');
    assert.throws(
      () => signer.sign(session, { key: 'charge:v1:acme:e-1', requestHash: 'a'.repeat(64), decision: 'approve' }),
      /only an authenticated operator can sign/,
      'a session opened with the old token cannot sign',
    );
    await writeFile(file, '{ broken');
    await bump(file);
    assert.equal(signer.authenticate(bob.token), undefined, 'a broken file recognizes nobody (fail closed)');
    assert.match(reloadErrors.join('\n'), /live\.json: .*no operator is recognized until it is fixed/);
    await rm(file);
    assert.equal(signer.authenticate(bob.token), undefined, 'nor does a deleted one');
    await addOperator(file, 'carol');
    assert.equal(signer.authenticate(bob.token), undefined, 'a new file lists only its own operators');
  });

  it('every reader refuses a misspelt field the same way, naming it', async () => {
    const file = path.join(dir, 'typo.json');
    await writeFile(
      file,
      JSON.stringify({ operators: [{ name: 'carol', tokenSha256: 'c'.repeat(64), role: ['admin'] }] }),
    );
    await assert.rejects(loadOperatorsFile(file), /typo\.json: operators\.0.*role/);
    await assert.rejects(operatorScopesReader(file)(), /typo\.json: operators\.0.*role/);
    await assert.rejects(readOpsOperatorsFile(file), /typo\.json: operators\.0.*role/);
  });
});
