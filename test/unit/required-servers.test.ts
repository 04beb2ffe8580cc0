import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MissingServerError, skipWithout } from '../../scripts/lib/required-servers';

const FIXTURE = path.join(__dirname, '../support/fixtures/needs-a-missing-server.ts');

/** Runs the fixture's test file as `npm test` runs one, with RETRYSAFE_REQUIRE_SERVERS as given. */
function runFixture(require: string | undefined) {
  const env = { ...process.env };
  delete env.RETRYSAFE_REQUIRE_SERVERS;
  delete env.NODE_TEST_CONTEXT; // a run of its own, not a subtest of this one
  if (require !== undefined) env.RETRYSAFE_REQUIRE_SERVERS = require;
  return spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', FIXTURE], {
    encoding: 'utf8',
    env,
  });
}

describe('RETRYSAFE_REQUIRE_SERVERS', () => {
  it('skips a test whose server is missing, saying why and how to make it a failure', () => {
    const run = runFixture(undefined);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /# skipped 1/);
    assert.match(run.stdout, /the imaginary server is not here.*RETRYSAFE_REQUIRE_SERVERS=1 makes this a failure/);
  });

  it('fails the run instead when set to 1, as .ci/run sets it', () => {
    const run = runFixture('1');
    assert.notEqual(run.status, 0, 'a missing server fails the run');
    assert.match(run.stdout, /not ok 1 - a case on a server that is not here/);
    assert.match(run.stdout, /name: 'MissingServerError'/);
    assert.doesNotMatch(run.stdout, /ran without its server/, 'the case itself never runs');
  });

  it('is nothing when the server is here, and only "1" requires', () => {
    assert.equal(skipWithout(false, { RETRYSAFE_REQUIRE_SERVERS: '1' }), false);
    assert.throws(() => skipWithout('gone', { RETRYSAFE_REQUIRE_SERVERS: '1' }), MissingServerError);
    assert.match(String(skipWithout('gone', { RETRYSAFE_REQUIRE_SERVERS: '0' })), /^gone \(skipped/);
  });

  it('is set by .ci/run', async () => {
    const { readFile } = await import('node:fs/promises');
    const ci = await readFile(path.join(__dirname, '../../.ci/run'), 'utf8');
    assert.match(ci, /^export RETRYSAFE_REQUIRE_SERVERS=1$/m);
  });
});
