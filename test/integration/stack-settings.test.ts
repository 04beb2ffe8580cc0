import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectClient } from 'retrysafe';
import { StackSettingsMismatch } from '../../client/stack-settings';
import { startDevStack, type DevStack } from '../../cli/dev/dev-stack';

/**
 * A worker or client whose settings disagree with its stack's says so at start, in one line naming the setting,
 * instead of failing later with a codec error or a decision it cannot verify. The stack is `retrysafe dev`'s, run
 * from code on free ports; the worker is the example worker, started as a team starts theirs.
 */
const ROOT = path.resolve(__dirname, '..', '..');

describe('a worker or client against the stack it connects to', () => {
  let dir: string;
  let stack: DevStack;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-settings-'));
    stack = await startDevStack({ dir, port: 0, uiPort: null, approvalsPort: 0 });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The example worker's process with `env`; resolves with its exit code and output once it exits (or is ready). */
  function startWorker(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'examples', 'worker.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    return new Promise((resolve) => {
      const collect = (c: Buffer) => {
        output += c.toString();
        if (output.includes('"event":"worker-ready"')) {
          child.kill('SIGKILL');
          resolve({ code: null, output });
        }
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.once('exit', (code) => resolve({ code, output }));
    });
  }

  const sandbox = Object.fromEntries(
    ['PAYMENTS', 'EMAIL', 'TICKETS', 'INVENTORY', 'SHIPPING'].map((k) => [`RETRYSAFE_${k}_URL`, 'http://127.0.0.1:9']),
  );

  it('starts a worker given the settings the stack wrote', async () => {
    const started = await startWorker({ ...stack.env, ...sandbox });
    assert.equal(started.code, null, started.output);
  });

  for (const [setting, change, said] of [
    [
      'RETRYSAFE_PAYLOAD_KEYS_FILE',
      { RETRYSAFE_PAYLOAD_KEYS_FILE: undefined },
      /this stack encrypts payloads \(key k1\) and this worker has no payload keys/,
    ],
    [
      'RETRYSAFE_APPROVAL_PUBLIC_KEYS',
      { RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE: undefined },
      /signs with ed25519-[0-9a-f]+ and this worker trusts no approval key/,
    ],
    // A worker needs its ledger: unset is refused before anything else is read of it …
    [
      'RETRYSAFE_LEDGER',
      { RETRYSAFE_LEDGER: undefined },
      /not set, and every action's record is its ledger row\. Set RETRYSAFE_LEDGER=sqlite:<file> .* or RETRYSAFE_LEDGER=postgres:\/\//,
    ],
    // … and so is 0.2's `none`, saying what to set instead.
    ['RETRYSAFE_LEDGER', { RETRYSAFE_LEDGER: 'none' }, /RETRYSAFE_LEDGER: none is no longer accepted: .*sqlite:<file>/],
  ] as const) {
    it(`stops a worker with ${JSON.stringify(change)} at start, exit 2, in one line naming ${setting}`, async () => {
      const env: Record<string, string> = { ...stack.env, ...sandbox };
      for (const [name, value] of Object.entries(change)) {
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
      const { code, output } = await startWorker(env);
      assert.equal(code, 2, output);
      const lines = output.trim().split('\n');
      assert.equal(lines.length, 1, output);
      assert.ok(lines[0].startsWith(`${setting}: `), output);
      assert.match(lines[0], said);
    });
  }

  it('refuses a client without the payload keys, naming the setting, and connects one with them', async () => {
    const { RETRYSAFE_PAYLOAD_KEYS_FILE: _keys, ...withoutKeys } = stack.env;
    await assert.rejects(connectClient(withoutKeys), (err: unknown) => {
      assert.ok(err instanceof StackSettingsMismatch);
      assert.equal(err.setting, 'RETRYSAFE_PAYLOAD_KEYS_FILE');
      return true;
    });
    const { connection } = await connectClient(stack.env);
    await connection.close();
  });
});
