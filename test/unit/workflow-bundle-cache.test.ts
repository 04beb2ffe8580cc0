import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleKey, ensureCached } from '../../scripts/lib/workflow-bundle';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function tempDir(prefix: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

describe('the workflow bundle cache key', () => {
  async function project() {
    const root = await tempDir('retrysafe-bundle-key-');
    await mkdir(path.join(root, 'workflows'));
    await mkdir(path.join(root, 'node_modules', 'dep'), { recursive: true });
    await mkdir(path.join(root, 'docs'));
    await writeFile(path.join(root, 'workflows', 'index.ts'), 'export const a = 1;\n');
    await writeFile(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    await writeFile(path.join(root, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    await writeFile(path.join(root, 'docs', 'notes.md'), 'notes\n');
    return root;
  }

  it('changes with any source file, a new one, the lock file or the workflow module; not with what cannot be bundled', async () => {
    const root = await project();
    const workflows = path.join(root, 'workflows', 'index.ts');
    const first = await bundleKey(workflows, root);
    assert.match(first, /^[0-9a-f]{32}$/);
    assert.equal(await bundleKey(workflows, root), first, 'the same files give the same key');

    await writeFile(path.join(root, 'docs', 'notes.md'), 'other notes\n');
    await writeFile(path.join(root, 'node_modules', 'dep', 'index.js'), 'module.exports = 2;\n');
    assert.equal(await bundleKey(workflows, root), first, 'docs and node_modules (the lock file stands for it)');

    await writeFile(workflows, 'export const a = 2;\n');
    const edited = await bundleKey(workflows, root);
    assert.notEqual(edited, first, 'an edited source file');

    await writeFile(path.join(root, 'workflows', 'helper.json'), '{}\n');
    const added = await bundleKey(workflows, root);
    assert.notEqual(added, edited, 'a new source file');

    await writeFile(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
    const locked = await bundleKey(workflows, root);
    assert.notEqual(locked, added, 'another lock file');

    assert.notEqual(await bundleKey(path.join(root, 'workflows', 'other.ts'), root), locked, 'another workflow module');
  });
});

describe('the workflow bundle cache', () => {
  const cacheDir = () => tempDir('retrysafe-bundle-cache-');
  /** A build that counts its calls and takes a while, so that callers overlap. */
  function slowBuild(code: string) {
    const build = async () => {
      build.calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return code;
    };
    build.calls = 0;
    return build;
  }

  it('builds once for callers in one process at the same time (two stacks started together), and leaves no partial file', async () => {
    const dir = await cacheDir();
    const cached = path.join(dir, 'key.js');
    const build = slowBuild('bundle code');
    await Promise.all([ensureCached(cached, build), ensureCached(cached, build), ensureCached(cached, build)]);
    assert.equal(build.calls, 1);
    assert.equal(await readFile(cached, 'utf8'), 'bundle code');
    assert.deepEqual(await readdir(dir), ['key.js']);
    await ensureCached(cached, build);
    assert.equal(build.calls, 1, 'a cached file is not built again');
  });

  it('gives every waiting caller a failed build, remembers nothing of it, and builds on the next call', async () => {
    const dir = await cacheDir();
    const cached = path.join(dir, 'key.js');
    const failing = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('webpack said no');
    };
    const results = await Promise.allSettled([ensureCached(cached, failing), ensureCached(cached, failing)]);
    assert.deepEqual(
      results.map((r) => r.status === 'rejected' && (r.reason as Error).message),
      ['webpack said no', 'webpack said no'],
    );
    assert.deepEqual(await readdir(dir), [], 'nothing is cached from a failed build');
    const build = slowBuild('second try');
    await ensureCached(cached, build);
    assert.equal(await readFile(cached, 'utf8'), 'second try');
  });
});
