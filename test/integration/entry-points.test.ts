import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

/** Entry points check their arguments before anything starts: a bad one starts no server and leaves nothing behind. */
const ROOT = path.resolve(__dirname, '..', '..');

function run(script: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
}

describe('entry points refuse bad arguments before starting anything', () => {
  it('npm start refuses an event ID with a delimiter, naming --event, and creates no database', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'retrysafe-start-'));
    try {
      const dbFile = path.join(dir, 'temporal.sqlite');
      const res = run('scripts/start.ts', [
        '--once',
        '--event',
        'bad:event',
        '--db-file',
        dbFile,
        '--port',
        '0',
        '--ui-port',
        '0',
      ]);
      assert.equal(res.status, 2, res.stderr);
      assert.match(res.stderr, /--event: must not contain ':'/);
      assert.doesNotMatch(res.stderr, /at .*\.ts:\d+/, 'no stack trace');
      assert.equal(existsSync(dbFile), false, 'no dev server was started');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('npm start refuses a port out of range', () => {
    const res = run('scripts/start.ts', ['--port', '70000']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--port must be a port number/);
  });

  it('npm start -- --help lists every flag with its default, and exits 0', () => {
    const res = run('scripts/start.ts', ['--help']);
    assert.equal(res.status, 0, res.stderr);
    for (const flag of ['--once', '--json', '--event', '--port', '--ui-port', '--approvals-port', '--db-file']) {
      assert.match(res.stdout, new RegExp(`^  ${flag} `, 'm'));
    }
    assert.match(res.stdout, /--port N +Temporal gRPC port \(default 7233/);
  });

  it("a worker given RETRYSAFE_LEDGER=none (0.2's choice) stops at start, naming the setting and what to set", () => {
    const res = run('examples/worker.ts', [], { RETRYSAFE_LEDGER: 'none', TEMPORAL_ADDRESS: '127.0.0.1:9' });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /RETRYSAFE_LEDGER: none is no longer accepted.*sqlite:<file>.*postgres:\/\//);
  });

  const unreachableProviders = Object.fromEntries(
    ['PAYMENTS', 'EMAIL', 'TICKETS', 'INVENTORY', 'SHIPPING'].map((p) => [`RETRYSAFE_${p}_URL`, 'http://127.0.0.1:9']),
  );

  it('a worker whose ledger cannot be opened stops at start with the setting and the cause', () => {
    const res = run('examples/worker.ts', [], {
      RETRYSAFE_LEDGER: 'sqlite:/dev/null/ledger.sqlite',
      TEMPORAL_ADDRESS: '127.0.0.1:9',
      ...unreachableProviders,
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /RETRYSAFE_LEDGER=sqlite:\/dev\/null\/ledger\.sqlite: the ledger could not be opened: /);
  });

  it('a worker whose PostgreSQL ledger is unreachable stops at start with the setting, the cause, and no password', () => {
    // Port 9 (discard) on loopback: nothing listens, so the connection is refused at once.
    const res = run('examples/worker.ts', [], {
      RETRYSAFE_LEDGER: 'postgres://retrysafe:s3cret-pw@127.0.0.1:9/ledger',
      TEMPORAL_ADDRESS: '127.0.0.1:9',
      ...unreachableProviders,
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(
      res.stderr,
      /RETRYSAFE_LEDGER=postgres:\/\/retrysafe:\*\*\*@127\.0\.0\.1:9\/ledger: the ledger could not be opened: .*ECONNREFUSED/,
    );
    assert.doesNotMatch(res.stderr, /s3cret-pw/);
  });

  it('the example worker names a missing provider URL and exits 2 before connecting', () => {
    const res = run('examples/worker.ts', [], {
      RETRYSAFE_LEDGER: 'sqlite::memory:',
      RETRYSAFE_PAYMENTS_URL: '',
      TEMPORAL_ADDRESS: '127.0.0.1:9',
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, /RETRYSAFE_PAYMENTS_URL/);
  });
});
