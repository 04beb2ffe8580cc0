import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  LOCALSTRIPE_VERSION,
  localstripeFolder,
  resolveLocalstripe,
  type LocalstripeInstaller,
} from '../../scripts/toolchain/resolve-localstripe';
import { fakeExecutable } from '../support/fake-executable';

/** The order localstripe is found in, with python3 and the pip install replaced by fakes. */
describe('resolving localstripe: env, the cached install, an install', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-resolve-localstripe-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A python3 that answers the resolver's question about its build with `tag`. */
  const python = (name: string, tag = 'cpython-3.11-linux-x86_64') =>
    fakeExecutable(path.join(dir, 'bin', name), `echo ${tag}`);
  /** An installer that leaves a package folder behind, counting its calls. */
  const recordingInstaller = () => {
    const calls: string[] = [];
    const installer: LocalstripeInstaller = async (into) => {
      calls.push(into);
      await mkdir(path.join(into, 'localstripe'), { recursive: true });
      await writeFile(path.join(into, 'localstripe', '__init__.py'), '');
    };
    return { calls, installer };
  };

  it('takes RETRYSAFE_LOCALSTRIPE first, and refuses one that points nowhere or cannot import localstripe', async () => {
    const good = await fakeExecutable(path.join(dir, 'env', 'python'), 'exit 0');
    assert.deepEqual(await resolveLocalstripe({ env: { RETRYSAFE_LOCALSTRIPE: good }, projectRoot: dir }), {
      python: good,
      source: 'env',
    });
    await assert.rejects(
      resolveLocalstripe({ env: { RETRYSAFE_LOCALSTRIPE: path.join(dir, 'missing') }, projectRoot: dir }),
      /RETRYSAFE_LOCALSTRIPE=.*missing does not exist/,
    );
    const bare = await fakeExecutable(
      path.join(dir, 'env', 'bare-python'),
      `echo "ModuleNotFoundError: No module named 'localstripe'" >&2; exit 1`,
    );
    await assert.rejects(
      resolveLocalstripe({ env: { RETRYSAFE_LOCALSTRIPE: bare }, projectRoot: dir }),
      /RETRYSAFE_LOCALSTRIPE=.*bare-python cannot import localstripe: ModuleNotFoundError: No module named 'localstripe'/,
    );
  });

  it('says how to install it when nothing is cached and installing is off', async () => {
    const env = { PYTHON: await python('python3') };
    await assert.rejects(
      resolveLocalstripe({ env, projectRoot: dir, install: false }),
      /no localstripe found \(tried: .*localstripe-1\.15\.10: not installed\); install it with `npm run setup:toolchain`/,
    );
  });

  it('says python3 is missing when it cannot be run', async () => {
    await assert.rejects(
      resolveLocalstripe({ env: { PYTHON: path.join(dir, 'no-python3') }, projectRoot: dir }),
      /no localstripe found \(tried: .*no-python3: .*\); it runs on python3 .*`npm run setup:toolchain`/,
    );
  });

  it('installs once into .tools/localstripe-<version>/, then finds the cached install without installing', async () => {
    const root = await mkdtemp(path.join(dir, 'cache-'));
    const env = { PYTHON: await python('python3') };
    const { calls, installer } = recordingInstaller();
    const folder = localstripeFolder(root);
    const installed = await resolveLocalstripe({ env, projectRoot: root, installer });
    assert.deepEqual(installed, {
      python: env.PYTHON,
      sitePackages: path.join(folder, 'site-packages'),
      source: 'installed',
      version: LOCALSTRIPE_VERSION,
    });
    const again = await resolveLocalstripe({ env, projectRoot: root, installer });
    assert.equal(again.source, 'project-local');
    assert.equal(calls.length, 1, 'installed once');
    assert.deepEqual(JSON.parse(await readFile(path.join(folder, 'installed.json'), 'utf8')), {
      localstripe: LOCALSTRIPE_VERSION,
      python: 'cpython-3.11-linux-x86_64',
    });
    assert.deepEqual(
      (await readdir(path.dirname(folder))).filter((name) => name.includes('.partial-')),
      [],
      'no staging folder left',
    );
  });

  it('installs afresh for another python3: the compiled wheels fit only the one they were installed for', async () => {
    const root = await mkdtemp(path.join(dir, 'other-python-'));
    const { calls, installer } = recordingInstaller();
    await resolveLocalstripe({ env: { PYTHON: await python('python3.11') }, projectRoot: root, installer });
    const later = { PYTHON: await python('python3.13', 'cpython-3.13-linux-aarch64') };
    await assert.rejects(
      resolveLocalstripe({ env: later, projectRoot: root, installer, install: false }),
      /installed for cpython-3\.11-linux-x86_64, this python3 is cpython-3\.13-linux-aarch64/,
    );
    assert.equal((await resolveLocalstripe({ env: later, projectRoot: root, installer })).source, 'installed');
    assert.equal(calls.length, 2);
    const marker = JSON.parse(await readFile(path.join(localstripeFolder(root), 'installed.json'), 'utf8'));
    assert.equal(marker.python, 'cpython-3.13-linux-aarch64');
  });

  it('takes no half-finished install: a folder without its marker is installed again', async () => {
    const root = await mkdtemp(path.join(dir, 'half-'));
    await mkdir(path.join(localstripeFolder(root), 'site-packages', 'localstripe'), { recursive: true });
    const { calls, installer } = recordingInstaller();
    const found = await resolveLocalstripe({ env: { PYTHON: await python('python3') }, projectRoot: root, installer });
    assert.equal(found.source, 'installed');
    assert.equal(calls.length, 1);
  });

  it('leaves no cache behind when the install fails', async () => {
    const root = await mkdtemp(path.join(dir, 'failing-'));
    await assert.rejects(
      resolveLocalstripe({
        env: { PYTHON: await python('python3') },
        projectRoot: root,
        installer: async () => {
          throw new Error('python3 -m pip install failed (exit 1): No matching distribution found');
        },
      }),
      /installing localstripe failed: python3 -m pip install failed \(exit 1\): No matching distribution found/,
    );
    await assert.rejects(readdir(localstripeFolder(root)));
  });
});
