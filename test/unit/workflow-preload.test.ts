import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { writeWorkflowBundle } from '../../scripts/lib/workflow-bundle';
import { WORKFLOW_PRELOAD_MODULES, withEnginePreloads } from '../../workers/workflow-preload';

const ROOT = path.resolve(__dirname, '..', '..');
const ED25519 = path.join(ROOT, 'policies', 'ed25519.ts');

/** Source files under `dir` (recursively), leaving out what never enters a workflow bundle. */
async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (['node_modules', 'scripts', 'test', '.tools', '.out', 'deploy', 'docs'].includes(entry.name)) continue;
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(full)));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

describe('modules the workflow sandbox preloads once per worker', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('preloads the Ed25519 module that signed decisions verify with', () => {
    assert.deepEqual(WORKFLOW_PRELOAD_MODULES, [ED25519]);
  });

  it('keeps an application’s bundler options and adds its preloads after the engine’s, once each', () => {
    const hook = (c: object) => c;
    const options = withEnginePreloads({ webpackConfigHook: hook, preloadModules: ['app-module', ED25519] });
    assert.equal(options.webpackConfigHook, hook);
    assert.deepEqual(options.preloadModules, [ED25519, 'app-module']);
    assert.deepEqual(withEnginePreloads().preloadModules, [ED25519]);
  });

  it('is the only way workflow code reaches the curve: no other module imports @noble/curves', async () => {
    // A module that imported the library itself would load a second, per-workflow copy of the curve, and with
    // it the precomputation the preload exists to share.
    const importers: string[] = [];
    for (const file of await sources(ROOT)) {
      if (/from '@noble\/curves/.test(await readFile(file, 'utf8'))) importers.push(path.relative(ROOT, file));
    }
    assert.deepEqual(importers, ['policies/ed25519.ts']);
  });

  it('is preloaded by the launchers’ shared bundle (RETRYSAFE_WORKFLOW_BUNDLE)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bundle-'));
    dirs.push(dir);
    const code = await readFile(await writeWorkflowBundle(dir), 'utf8');
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code);
    assert.ok(preload, 'the bundle has a preloadModules entry');
    assert.match(preload[1]!, /"\.\/policies\/ed25519\.ts"/);
  });
});
