import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { INIT_SCRIPTS, InitRefused, initProject, TEMPLATE_DIR } from '../../cli/init/init-command';

const ROOT = path.resolve(__dirname, '..', '..');

describe('retrysafe init', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-init-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('scaffolds a fresh npm project: sources, tsconfig, .gitignore, scripts, and what to install', async () => {
    const fresh = { name: 'team', version: '1.0.0', scripts: { test: 'echo no tests' }, dependencies: { zod: '^4' } };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify(fresh));
    const result = await initProject(dir, { nodeVersion: '24.1.0' });
    const sources = ['src/client.ts', 'src/fake-chat.ts', 'src/tools.ts', 'src/worker.ts', 'src/workflows.ts'];
    assert.deepEqual(result.written, [...sources, 'tsconfig.json', '.gitignore']);
    for (const file of sources)
      assert.equal(readFileSync(path.join(dir, file), 'utf8'), readFileSync(path.join(TEMPLATE_DIR, file), 'utf8'));
    const tsconfig = JSON.parse(await readFile(path.join(dir, 'tsconfig.json'), 'utf8'));
    assert.equal(tsconfig.compilerOptions.skipLibCheck, true, "Temporal's own types need skipLibCheck");
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.scripts, { test: 'echo no tests', ...INIT_SCRIPTS });
    assert.deepEqual(pkg.dependencies, { zod: '^4' }, 'the rest of package.json is kept');
    assert.equal(result.next[0], 'npm install retrysafe @temporalio/client @temporalio/worker @temporalio/workflow');
    assert.equal(result.next[1], 'npm install --save-dev typescript @types/node');
    // Commands that say what they run, not the project's own scripts a reader would have to look up.
    assert.deepEqual(
      result.next.slice(2).map((line) => line.split(' # ')[0].trim()),
      [
        'npx tsc -p .',
        'npx retrysafe dev',
        'node --env-file=.retrysafe/dev.env dist/worker.js',
        'node --env-file=.retrysafe/dev.env dist/client.js launch-1 "We are live"',
      ],
    );
    assert.equal((await readFile(path.join(dir, '.gitignore'), 'utf8')).split('\n').includes('.retrysafe/'), true);
  });

  it('asks for better-sqlite3 on Node.js 20, and makes package.json in an empty folder', async () => {
    const result = await initProject(dir, { nodeVersion: '20.19.0' });
    assert.match(result.next[0], / zod better-sqlite3$/);
    assert.ok(result.written.includes('package.json'));
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, path.basename(dir).toLowerCase());
  });

  it('overwrites nothing without --force, and adds only the missing lines to an existing .gitignore', async () => {
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'x', scripts: { build: 'make' } }));
    await writeFile(path.join(dir, '.gitignore'), 'node_modules/\n');
    await writeFile(path.join(dir, 'tsconfig.json'), '{}');
    await assert.rejects(initProject(dir), (err: unknown) => {
      assert.ok(err instanceof InitRefused);
      assert.match(err.message, /^tsconfig\.json already exists in .*; nothing was written .*--force/);
      return true;
    });
    assert.equal(existsSync(path.join(dir, 'src')), false);
    const forced = await initProject(dir, { force: true });
    assert.deepEqual(forced.scriptsAdded, ['dev', 'worker', 'client'], 'its own build script is kept');
    assert.equal(await readFile(path.join(dir, '.gitignore'), 'utf8'), 'node_modules/\n\ndist/\n.retrysafe/\n');
  });
});

describe("the README's complete example", () => {
  it('is what retrysafe init writes', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const file of ['src/tools.ts', 'src/workflows.ts', 'src/worker.ts', 'src/client.ts']) {
      const block = new RegExp('```ts\\n// ' + file.replace(/[./]/g, '\\$&') + '\\n([\\s\\S]*?)```').exec(readme);
      assert.ok(block, `the README shows ${file}`);
      assert.equal(block[1], readFileSync(path.join(TEMPLATE_DIR, file), 'utf8'), `the README's ${file}`);
    }
  });
});
