import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { builtEntryPoints, ROOT } from '../../scripts/lib/built-package';

/** What requiring one built entry point loads, as a fresh Node process sees it: every module file, ROOT-relative. */
function modulesLoadedBy(file: string): string[] {
  const script = `require(${JSON.stringify(file)}); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as string[]).map((m) => m.slice(ROOT.length + 1));
}

const WORKER_SDK = /node_modules\/@temporalio\/(worker|activity)\//;
const ACTIVITY_OR_WORKER_CODE = /^dist\/(activities|workers)\//;

describe('the layers as the folders say', () => {
  const entries = new Map(builtEntryPoints().map((e) => [e.name, e.file]));

  for (const name of ['retrysafe', 'retrysafe/workflow']) {
    it(`${name} loads no activity or worker code, and neither Temporal's worker nor activity SDK`, () => {
      const loaded = modulesLoadedBy(entries.get(name)!);
      assert.ok(loaded.includes(`dist/api/${name === 'retrysafe' ? 'index' : 'workflow'}.js`), loaded.join('\n'));
      assert.deepEqual(
        loaded.filter((m) => ACTIVITY_OR_WORKER_CODE.test(m) || WORKER_SDK.test(m)),
        [],
      );
    });
  }

  for (const name of ['retrysafe/mcp', 'retrysafe/ai-sdk', 'retrysafe/openai-agents', 'retrysafe/tracing']) {
    it(`${name}, for code outside a worker, loads neither Temporal's worker nor activity SDK`, () => {
      assert.deepEqual(
        modulesLoadedBy(entries.get(name)!).filter((m) => WORKER_SDK.test(m)),
        [],
      );
    });
  }

  it('no entry point loads the retrysafe command (cli/)', () => {
    for (const [name, file] of entries) {
      assert.deepEqual(
        modulesLoadedBy(file).filter((m) => m.startsWith('dist/cli/')),
        [],
        name,
      );
    }
  });
});
