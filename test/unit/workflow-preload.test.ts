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
    if (['node_modules', 'scripts', 'test', '.tools', '.out', 'deploy', 'docs', 'dist'].includes(entry.name)) continue;
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

  it('preloads the Ed25519 module that signed decisions verify with, by the path webpack resolves it to', () => {
    assert.deepEqual(WORKFLOW_PRELOAD_MODULES, [ED25519]);
  });

  it('keeps an application’s bundler options and adds its preloads after the engine’s, once each', () => {
    const seen: object[] = [];
    const hook = <C extends object>(c: C): C => {
      seen.push(c);
      return c;
    };
    const options = withEnginePreloads({ webpackConfigHook: hook, preloadModules: ['app-module', ED25519] });
    // From the sources, the engine's own hook maps the entry points to api/ first, then hands over to the app's.
    const configured = options.webpackConfigHook!({ resolve: { alias: { mine: '/x' } } });
    assert.equal(seen.length, 1, 'the application’s hook ran');
    assert.deepEqual(Object.keys((configured.resolve?.alias ?? {}) as object).sort(), [
      'mine',
      'retrysafe$',
      'retrysafe/workflow$',
    ]);
    assert.deepEqual(options.preloadModules, [ED25519, 'app-module']);
    assert.deepEqual(withEnginePreloads().preloadModules, [ED25519]);
  });

  it('is the engine’s one way to the curve: no other module imports or requires @noble/curves', async () => {
    // A `require` resolves to the library's CommonJS build, a second copy of the curve in the bundle that the
    // preload does not share; a deep import of its internals could do the same. One door keeps that visible.
    const importers: string[] = [];
    for (const file of await sources(ROOT)) {
      const text = await readFile(file, 'utf8');
      if (/(from|require\(|import\()\s*['"]@noble\/curves/.test(text)) importers.push(path.relative(ROOT, file));
    }
    assert.deepEqual(importers, ['policies/ed25519.ts']);
  });

  it('is preloaded by the launchers’ shared bundle, which holds one copy of the curve, reached through it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-bundle-'));
    dirs.push(dir);
    const code = await readFile(await writeWorkflowBundle(dir), 'utf8');
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code);
    assert.ok(preload, 'the bundle has a preloadModules entry');
    assert.match(preload[1]!, /"\.\/policies\/ed25519\.ts"/);
    // Webpack names each module it bundles on a line of its own (`/***/ "<path>"`).
    const curves = [...code.matchAll(/^\/\*\*\*\/ "(\.\/node_modules\/@noble\/curves\/[^"]*ed25519[^"]*)"/gm)].map(
      (m) => m[1],
    );
    assert.deepEqual(curves, ['./node_modules/@noble/curves/esm/ed25519.js'], 'one copy of the curve, the ESM build');
    const importersOfCurve = code
      .split(/^\/\*\*\*\/ "/m)
      .filter((chunk) => chunk.includes('"./node_modules/@noble/curves/esm/ed25519.js")'))
      .map((chunk) => chunk.slice(0, chunk.indexOf('"')));
    assert.deepEqual(importersOfCurve, ['./policies/ed25519.ts'], 'only the preloaded module requires the curve');
  });
});
