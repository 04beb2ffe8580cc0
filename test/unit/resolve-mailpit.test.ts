import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { MAILPIT_VERSION, mailpitFolder, resolveMailpit } from '../../scripts/toolchain/resolve-mailpit';
import { fakeExecutable } from '../support/fake-executable';

/** The order Mailpit is found in, with the PATH lookup and the Go build replaced by fakes. */
describe('resolving Mailpit: env, PATH, the cached build, a build', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-resolve-mailpit-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const executable = fakeExecutable;
  const nowhere = async () => undefined;

  it('takes RETRYSAFE_MAILPIT first, and refuses one that points nowhere instead of falling back', async () => {
    const binary = await executable(path.join(dir, 'env', 'mailpit'));
    const onPath = async () => '/opt/bin/mailpit';
    assert.deepEqual(
      await resolveMailpit({ env: { RETRYSAFE_MAILPIT: binary }, projectRoot: dir, lookupOnPath: onPath }),
      {
        path: binary,
        source: 'env',
      },
    );
    await assert.rejects(
      resolveMailpit({ env: { RETRYSAFE_MAILPIT: path.join(dir, 'missing') }, projectRoot: dir, lookupOnPath: onPath }),
      /RETRYSAFE_MAILPIT=.*missing does not exist/,
    );
  });

  it('takes mailpit from PATH before the cached build', async () => {
    const found = await resolveMailpit({ env: {}, projectRoot: dir, lookupOnPath: async () => '/opt/bin/mailpit' });
    assert.deepEqual(found, { path: '/opt/bin/mailpit', source: 'path' });
  });

  it('says how to build it when nothing is found and building is off', async () => {
    await assert.rejects(
      resolveMailpit({ env: {}, projectRoot: dir, lookupOnPath: nowhere, build: false }),
      /no Mailpit found \(tried: .*\); build it with `npm run setup:toolchain`/,
    );
  });

  it('builds once into .tools/mailpit-<version>/, then finds the cached build without building', async () => {
    const calls: string[] = [];
    const builder = async (into: string) => {
      calls.push(into);
      await executable(path.join(into, 'mailpit'));
    };
    const built = await resolveMailpit({ env: {}, projectRoot: dir, lookupOnPath: nowhere, builder });
    const folder = mailpitFolder(dir);
    assert.deepEqual(built, { path: path.join(folder, 'mailpit'), source: 'built', version: MAILPIT_VERSION });
    const again = await resolveMailpit({ env: {}, projectRoot: dir, lookupOnPath: nowhere, builder });
    assert.equal(again.source, 'project-local');
    assert.equal(calls.length, 1, 'built once');
    assert.deepEqual(
      (await readdir(path.dirname(folder))).filter((name) => name.includes('.partial-')),
      [],
      'no staging folder left',
    );
  });

  it('leaves no cache behind when the build fails', async () => {
    const root = await mkdtemp(path.join(dir, 'failing-'));
    await assert.rejects(
      resolveMailpit({
        env: {},
        projectRoot: root,
        lookupOnPath: nowhere,
        builder: async () => {
          throw new Error('go: module lookup disabled');
        },
      }),
      /building Mailpit failed: go: module lookup disabled/,
    );
    await assert.rejects(readdir(mailpitFolder(root)));
  });
});
