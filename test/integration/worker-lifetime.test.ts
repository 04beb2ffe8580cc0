import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startStack, type Stack } from '../../scripts/lib/stack';

const ROOT = path.resolve(__dirname, '..', '..');
/** Running, and not a zombie waiting for a parent that does not reap it. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('a worker spawned by the project’s scripts, on a real Temporal server', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('stops by itself on SIGTERM: exit code 0, not the SIGKILL stop() sends after its grace period', async () => {
    const worker = await stack.startWorker({ name: 'stops-cleanly' });
    await worker.stop();
    assert.deepEqual(await worker.exited, { code: 0, signal: null });
  });

  it('stops when the process that spawned it is SIGKILLed, instead of polling on as an orphan', async () => {
    const parent = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test', 'support', 'spawn-worker-and-wait.ts')],
      {
        cwd: ROOT,
        env: { ...process.env, RETRYSAFE_TEST_WORKER_ENV: JSON.stringify(stack.workerEnv) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: parent.stdout! }).once('line', resolve);
      parent.once('exit', (code) => reject(new Error(`the parent exited (${code}) before its worker was ready`)));
    });
    const { workerPid } = JSON.parse(line) as { workerPid: number };
    assert.ok(alive(workerPid), 'the worker runs');
    parent.kill('SIGKILL');
    const deadline = Date.now() + 30_000;
    while (alive(workerPid) && Date.now() < deadline) await sleep(100);
    const orphaned = alive(workerPid);
    if (orphaned) process.kill(workerPid, 'SIGKILL');
    assert.equal(orphaned, false, 'the worker outlived its parent');
  });
});
