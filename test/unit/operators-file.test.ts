import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { operatorScopesReader } from '../../workers/operators-file';

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
    await writeFile(file, JSON.stringify({ operators: [{ name: 'bob', roles: ['owner'] }] }));
    await assert.rejects(operatorScopesReader(file)(), /bad\.json: operators\.0\.roles\.0/);
  });
});
