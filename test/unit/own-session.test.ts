import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

const LAUNCHER = path.resolve(__dirname, '..', 'support', 'fixtures', 'session-launcher.ts');

/** The process's state letter from /proc (`T` stopped, `Z` zombie), or `gone`. */
function stateOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
  } catch {
    return 'gone';
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * A shell with job control starts the launcher as a job (a process group of its own in this session); the launcher
 * starts a child. The child is stopped, then the shell exits, which leaves the job's group orphaned: what happens
 * when the shell that started a chaos run in the background exits during a worker's pause. Returns the child's
 * state a moment later.
 */
async function childStateAfterTheShellLeaves(mode: 'own-session' | 'same-group'): Promise<string> {
  const shell = spawn(
    'bash',
    ['-c', `set -m; "${process.execPath}" --import tsx "${LAUNCHER}" ${mode} & read -r _; exit 0`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const shellExited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  let out = '';
  const pids = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the launcher printed no pids within 30 s: ${out}`)), 30_000);
    shell.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^(\d+) (\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve([Number(m[1]), Number(m[2])]);
      }
    });
  });
  const [launcher, child] = pids;
  try {
    process.kill(child, 'SIGSTOP');
    for (let i = 0; i < 50 && stateOf(child) !== 'T'; i++) await sleep(20);
    assert.equal(stateOf(child), 'T', 'the child is stopped before the shell leaves');
    shell.stdin!.end('go\n');
    await shellExited;
    await sleep(500);
    return stateOf(child);
  } finally {
    kill(child, 'SIGKILL');
    kill(launcher, 'SIGKILL');
  }
}

describe(
  'spawnInOwnSession: a paused child outlives the shell that started its parent',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  () => {
    it('left in the launching group, a stopped child is hung up when that group is orphaned (the hazard)', async () => {
      const state = await childStateAfterTheShellLeaves('same-group');
      assert.ok(
        state === 'gone' || state === 'Z',
        `expected the kernel to hang the stopped child up; its state is ${state}`,
      );
    });

    it('in a session of its own, the stopped child stays stopped, alive, until someone continues it', async () => {
      assert.equal(await childStateAfterTheShellLeaves('own-session'), 'T');
    });
  },
);
