import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { builtEntryPoints, ROOT } from '../../scripts/lib/built-package';

/** A surface a Temporal engineer reads in one sitting (`@temporalio/worker` exports 29 runtime values). */
const MOST_RUNTIME_EXPORTS: Readonly<Record<string, number>> = { retrysafe: 40 };
const MOST_RUNTIME_EXPORTS_ELSEWHERE = 30;

/** The runtime values of one built entry point, as `Object.keys(require(…))` in a fresh process lists them. */
function runtimeExports(file: string): string[] {
  const script = `process.stdout.write(JSON.stringify(Object.keys(require(${JSON.stringify(file)}))))`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
}

describe('the built package’s surface', () => {
  for (const { name, file } of builtEntryPoints()) {
    const most = MOST_RUNTIME_EXPORTS[name] ?? MOST_RUNTIME_EXPORTS_ELSEWHERE;
    it(`${name} exports at most ${most} runtime values`, () => {
      const names = runtimeExports(file);
      assert.ok(names.length <= most, `${name}: ${names.length} runtime exports\n${names.join(' ')}`);
    });
  }

  it('exports none of the engine’s internals: wire protocol, patch IDs, search attribute names, helpers', () => {
    const internal = [
      /PATCH$/,
      /^(settle|dispatchReport|actionUpdate)Signal$/,
      /^(claim|watch)Update$/,
      /^DISPATCH_/,
      /^SA_/,
      /^(REDACT_PATHS|WORKFLOW_PRELOAD_MODULES|allIssues|isLoopbackHost|tokenSha256)$/,
    ];
    for (const { name, file } of builtEntryPoints()) {
      const leaked = runtimeExports(file).filter((n) => internal.some((pattern) => pattern.test(n)));
      assert.deepEqual(leaked, [], name);
    }
  });
});
