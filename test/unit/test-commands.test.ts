import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CHECKS } from '../../scripts/checks';

const ROOT = path.resolve(__dirname, '..', '..');
const scripts = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** The test files a script's `node --test` line names, with `dir/*.test.ts` expanded as the shell would. */
function filesOf(script: string): string[] {
  const words = script.split(/\s+/).filter((word) => /^test\/.+\.test\.ts$/.test(word));
  return words.flatMap((word) => {
    if (!word.includes('*')) return [word];
    const dir = path.dirname(word);
    assert.equal(path.basename(word), '*.test.ts', `only dir/*.test.ts patterns are expanded here: ${word}`);
    return readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `${dir}/${f}`);
  });
}

function allTestFiles(): string[] {
  return readdirSync(path.join(ROOT, 'test'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((dir) =>
      readdirSync(path.join(ROOT, 'test', dir.name))
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => `test/${dir.name}/${f}`),
    );
}

describe('the test commands', () => {
  const main = new Set(filesOf(scripts.test));
  const long = new Set(filesOf(scripts['test:long']));
  const cluster = new Set(filesOf(scripts['test:cluster']));

  it('run every test file: npm test all but test/long/ and test/cluster/, which the other two run', () => {
    const missed = allTestFiles().filter((file) => !main.has(file) && !long.has(file) && !cluster.has(file));
    assert.deepEqual(missed, [], 'a test folder or file that no command runs');
  });

  it('keep the long checks out of npm test, and run the consumer on the LTS and the oldest Node.js there', () => {
    // The journeys through a packed install, an MCP server, Prometheus and Chromium take minutes: test:long runs them.
    const longOnly = ['test/long/', 'test/consumer/', 'test/mcp-provider/', 'test/conformance/'];
    assert.deepEqual(
      [...main].filter((file) => longOnly.some((dir) => file.startsWith(dir))),
      [],
    );
    for (const dir of longOnly)
      assert.ok(
        [...long].some((file) => file.startsWith(dir)),
        dir,
      );
    assert.match(scripts['test:long'], /RETRYSAFE_TEST_CONSUMER_RUNTIMES=lts,machine /);
  });

  it('run the static checks first in npm test, each of them an npm script of its own', () => {
    assert.match(scripts.test, /^npm run checks && /);
    assert.equal(scripts.checks, 'tsx scripts/checks.ts');
    assert.deepEqual(CHECKS.map((check) => check.script).sort(), [
      'api:check',
      'docs:api',
      'docs:links',
      'lint',
      'typecheck',
    ]);
    for (const check of CHECKS) assert.ok(scripts[check.script], `no npm script ${check.script}`);
    assert.equal(scripts.lint, 'eslint .');
    assert.equal(scripts.typecheck, 'tsc --noEmit -p .');
  });

  it('keep the cluster-only files out of npm test, which needs no Go build', () => {
    assert.deepEqual(
      [...main].filter((file) => file.startsWith('test/cluster/')),
      [],
    );
    assert.ok([...cluster].some((file) => file.startsWith('test/cluster/')));
    assert.match(scripts['test:cluster'], /RETRYSAFE_STACK_TEMPORAL=cluster /, 'the core files run on the cluster');
  });
});
