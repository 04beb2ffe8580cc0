/**
 * scripts/checks.ts runs the static checks side by side: here with real child processes standing in for eslint and
 * tsc, a failure is reported with its output and its name, every check still runs, and the lanes bound how many run
 * at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { describeResult, runChecks, type Check, type CheckResult } from '../../scripts/checks';

const dir = mkdtempSync(path.join(tmpdir(), 'retrysafe-checks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A check that appends start and end marks to a shared log, sleeps, prints and exits with `code`. */
function fake(script: string, code: number, sleepMs = 150): Check {
  const log = path.join(dir, 'order.log');
  const body =
    `const fs=require('fs');fs.appendFileSync(${JSON.stringify(log)},'start ${script}\\n');` +
    `setTimeout(()=>{fs.appendFileSync(${JSON.stringify(log)},'end ${script}\\n');` +
    `console.log('output of ${script}');console.error('error line of ${script}');process.exit(${code})},${sleepMs});`;
  return { script, command: [process.execPath, '-e', body] };
}

function maxAtOnce(): number {
  let running = 0;
  let most = 0;
  for (const line of readFileSync(path.join(dir, 'order.log'), 'utf8').trim().split('\n')) {
    running += line.startsWith('start ') ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

describe('the static checks runner', () => {
  it('runs every check, reports a failure with its output, and keeps to its lanes', async () => {
    rmSync(path.join(dir, 'order.log'), { force: true });
    const reported: CheckResult[] = [];
    const results = await runChecks(
      [fake('lint', 0), fake('typecheck', 2), fake('docs:api', 0), fake('docs:links', 0)],
      2,
      (result) => reported.push(result),
    );
    assert.deepEqual(results.map((r) => r.script).sort(), ['docs:api', 'docs:links', 'lint', 'typecheck']);
    assert.equal(reported.length, 4);
    assert.equal(maxAtOnce(), 2);
    const failed = results.find((r) => r.script === 'typecheck')!;
    assert.equal(failed.exitCode, 2);
    const line = describeResult(failed);
    assert.match(line, /output of typecheck\n/);
    assert.match(line, /error line of typecheck\n/);
    assert.match(line, /FAILED {2}typecheck \(exit 2, [\d.]+ s\): repeat it with npm run typecheck\n$/);
    assert.match(describeResult(results.find((r) => r.script === 'lint')!), /^ok {6}lint \([\d.]+ s\)\n$/);
  });

  it('runs one at a time on one lane', async () => {
    rmSync(path.join(dir, 'order.log'), { force: true });
    const results = await runChecks([fake('a', 0, 50), fake('b', 0, 50), fake('c', 0, 50)], 1, () => {});
    assert.deepEqual(
      results.map((r) => r.script),
      ['a', 'b', 'c'],
    );
    assert.equal(maxAtOnce(), 1);
  });

  it('reports a command that cannot start as failed, naming it', async () => {
    const [result] = await runChecks([{ script: 'lint', command: [path.join(dir, 'no-such-linter')] }], 1, () => {});
    assert.equal(result!.exitCode, 127);
    assert.match(result!.output, /could not start .*no-such-linter/);
  });

  it('refuses lanes that are not a whole number of at least 1', async () => {
    await assert.rejects(
      runChecks([fake('a', 0)], 0, () => {}),
      /lanes must be a whole number of at least 1: 0/,
    );
  });
});
