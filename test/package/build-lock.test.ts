import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { withFileLock } from '../../scripts/lib/file-lock';

/** The lock that lets test files ask for dist/ at once (scripts/lib/built-package.ts): one holder at a time. */

const FILE_LOCK = path.resolve(__dirname, '../../scripts/lib/file-lock.ts');

/** A process that holds `lock` for `holdMs`, writing `start <pid>` and `end <pid>` lines to `log` inside it. */
function holder(lock: string, log: string, holdMs: number): Promise<number | null> {
  const script = `
    const { appendFileSync } = require('node:fs');
    const { withFileLock } = require(${JSON.stringify(FILE_LOCK)});
    withFileLock(${JSON.stringify(lock)}, () => {
      appendFileSync(${JSON.stringify(log)}, 'start ' + process.pid + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs});
      appendFileSync(${JSON.stringify(log)}, 'end ' + process.pid + '\\n');
    }, { timeoutMs: 60000, staleMs: 60000, pollMs: 20 });`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
}

describe('the dist/ build lock', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'retrysafe-build-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one process at a time in: four at once run one after another, and leave no lock behind', async () => {
    const lock = path.join(dir, 'turns.lock');
    const log = path.join(dir, 'turns.log');
    const codes = await Promise.all([1, 2, 3, 4].map(() => holder(lock, log, 300)));
    assert.deepEqual(codes, [0, 0, 0, 0]);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(lines.length, 8, lines.join('\n'));
    for (let i = 0; i < lines.length; i += 2) {
      const [start, end] = [lines[i].split(' '), lines[i + 1].split(' ')];
      assert.deepEqual([start[0], end[0], end[1]], ['start', 'end', start[1]], `turns overlap:\n${lines.join('\n')}`);
    }
    assert.equal(existsSync(lock), false);
  });

  it('takes over a lock whose holder died', () => {
    const lock = path.join(dir, 'dead.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(lock, JSON.stringify({ pid: Number(dead.stdout), token: 'dead', at: Date.now() }));
    const started = Date.now();
    assert.equal(
      withFileLock(lock, () => 'ran', { timeoutMs: 5_000, staleMs: 60_000 }),
      'ran',
    );
    assert.ok(Date.now() - started < 1_000, 'no wait for a dead holder');
    assert.equal(existsSync(lock), false);
  });

  it('takes over a lock held longer than a holder may hold it', () => {
    const lock = path.join(dir, 'old.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, token: 'old', at: Date.now() - 120_000 }));
    assert.equal(
      withFileLock(lock, () => 'ran', { timeoutMs: 5_000, staleMs: 60_000 }),
      'ran',
    );
  });

  it('gives up after its timeout while a live holder keeps it, naming the holder, and leaves the lock alone', () => {
    const lock = path.join(dir, 'held.lock');
    const held = JSON.stringify({ pid: process.pid, token: 'someone-else', at: Date.now() });
    writeFileSync(lock, held);
    let ran = false;
    assert.throws(
      () => withFileLock(lock, () => (ran = true), { timeoutMs: 300, staleMs: 60_000, pollMs: 20 }),
      new RegExp(`held by pid ${process.pid} after 300 ms`),
    );
    assert.equal(ran, false);
    assert.equal(readFileSync(lock, 'utf8'), held);
  });

  it('releases the lock when the work throws', () => {
    const lock = path.join(dir, 'throws.lock');
    assert.throws(
      () =>
        withFileLock(
          lock,
          () => {
            throw new Error('the build failed');
          },
          { timeoutMs: 1_000, staleMs: 60_000 },
        ),
      /the build failed/,
    );
    assert.equal(existsSync(lock), false);
  });
});
