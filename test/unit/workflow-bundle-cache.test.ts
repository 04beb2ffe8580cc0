import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleKey } from '../../scripts/lib/workflow-bundle';

describe('the workflow bundle cache key', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function project() {
    const root = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bundle-key-'));
    dirs.push(root);
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
