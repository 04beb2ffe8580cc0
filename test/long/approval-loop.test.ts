import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readRunningStack, type RunningStack } from '../../scripts/demo/running-stack';
import { runScript } from '../support/ops-process';

/**
 * The approval loop as a new user meets it: `npm start` on an empty data folder, then `npm run demo` to
 * put an action in front of a person, then `ops approve KEY` or `ops reject KEY` with nothing exported
 * but where the data folder is. Every program runs in its own process; charges are counted at the
 * payments provider.
 */
const ROOT = path.resolve(__dirname, '..', '..');

/** The environment of a new shell: nothing of the test's Temporal or retrysafe settings leaks in. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('RETRYSAFE_')),
    ),
    ...extra,
  };
}

/** Starts `npm start` and resolves once it says it keeps running; `output()` is everything it printed. */
async function startStackProcess(dbFile: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'scripts/start.ts'),
      '--db-file',
      dbFile,
      '--port',
      '0',
      '--ui-port',
      '0',
      '--approvals-port',
      '0',
      '--metrics-port',
      '0',
    ],
    { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${output}`)), 120_000);
    const check = () => {
      if (output.includes('Ctrl-C to stop')) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  return { child, output: () => output };
}

async function stopStackProcess(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

describe('the approval loop out of the box: npm start, npm run demo, ops approve', () => {
  let dir: string;
  let dbFile: string;
  let started: { child: ChildProcess; output: () => string };
  let stack: RunningStack;
  let opsEnv: NodeJS.ProcessEnv;

  const chargesFor = async (key: string) => {
    const ledger = (await (await fetch(new URL('/admin/ledger', stack.providers.payments))).json()) as {
      records: { charges?: Array<{ idempotencyKey?: string }> };
      requests: Array<{ idempotencyKey?: string }>;
    };
    return {
      charges: (ledger.records.charges ?? []).filter((c) => c.idempotencyKey === key).length,
      requests: ledger.requests.filter((r) => r.idempotencyKey === key).length,
    };
  };

  /** `npm run demo -- <state>`, returning the key it printed first. */
  async function demo(state: string): Promise<string> {
    const res = await runScript('scripts/demo/review-state.ts', [state, '--db-file', dbFile], cleanEnv());
    assert.equal(res.code, 0, res.stderr);
    const key = /^(\S+:v1:acme:\S+) is /m.exec(res.stdout)?.[1];
    assert.ok(key, res.stdout);
    return key;
  }

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-loop-'));
    dbFile = path.join(dir, 'temporal.sqlite');
    started = await startStackProcess(dbFile);
    const found = await readRunningStack(dir);
    assert.ok(found, 'npm start records what it runs');
    stack = found;
    // What a user types: where the approval service is (not the default port here) and nothing else;
    // the demo operator's token is found beside the operators file in the data folder.
    opsEnv = cleanEnv({
      TEMPORAL_ADDRESS: stack.temporalAddress,
      RETRYSAFE_APPROVAL_URL: stack.approvalsUrl,
      RETRYSAFE_OPERATORS_FILE: path.join(dir, 'operators.json'),
    });
  });
  after(async () => {
    if (started) await stopStackProcess(started.child);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('creates a demo operator and signing key on first start, private to the user, and says how to use them', async () => {
    const out = started.output();
    assert.match(out, /demo operator "demo" .*created now with signing key and operator/);
    assert.match(out, /npm run ops -- approve KEY/);
    for (const file of ['approval-signing-key.json', 'demo-operator.token', 'operators.json']) {
      assert.equal((await stat(path.join(dir, file))).mode & 0o777, 0o600, `${file} is mode 0600`);
    }
    const token = (await readFile(path.join(dir, 'demo-operator.token'), 'utf8')).trim();
    assert.ok(!(await readFile(path.join(dir, 'operators.json'), 'utf8')).includes(token), 'only its digest is listed');
  });

  it('ops approve KEY on an action awaiting confirmation gives one charge', async () => {
    const key = await demo('awaiting-confirmation');
    assert.deepEqual(await chargesFor(key), { charges: 0, requests: 0 }, 'nothing is sent before the approval');
    const shown = await runScript('cli/main.ts', ['ops', 'show', key], opsEnv);
    assert.match(shown.stdout, /Dry run/);
    assert.match(shown.stdout, new RegExp(`retrysafe ops approve ${key}`));

    const approved = await runScript('cli/main.ts', ['ops', 'approve', key, '--reason', 'customer confirmed'], opsEnv);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /awaiting_confirmation → confirmed \(approved by demo: customer confirmed\)/);
    assert.deepEqual(await chargesFor(key), { charges: 1, requests: 1 });

    // Approving again changes nothing: the action is no longer waiting.
    const again = await runScript('cli/main.ts', ['ops', 'approve', key], opsEnv);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is confirmed, not awaiting confirmation \(nothing sent\)/);
    assert.deepEqual(await chargesFor(key), { charges: 1, requests: 1 });
  });

  it('ops reject KEY fails the action with nothing sent', async () => {
    const key = await demo('awaiting-confirmation');
    const rejected = await runScript('cli/main.ts', ['ops', 'reject', key, '--reason', 'not ordered'], opsEnv);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(rejected.stdout, /awaiting_confirmation → failed \(rejected by demo: not ordered\)/);
    assert.deepEqual(await chargesFor(key), { charges: 0, requests: 0 });
  });

  it('the needs-review and unknown recipes end in a person’s resolution, never a blind resend', async () => {
    const review = await demo('needs-review');
    const failed = await runScript(
      'cli/main.ts',
      ['ops', 'resolve', review, '--decision', 'failed', '--reason', 'declined by finance'],
      opsEnv,
    );
    assert.equal(failed.code, 0, failed.stderr);
    assert.match(failed.stdout, /needs_review → failed/);
    assert.deepEqual(await chargesFor(review), { charges: 0, requests: 0 });

    const email = await demo('unknown');
    const approved = await runScript('cli/main.ts', ['ops', 'approve', email], opsEnv);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /→ needs_review/, 'the reply was lost: unknown, then a person decides');
    const shown = await runScript('cli/main.ts', ['ops', 'show', email, '--json'], opsEnv);
    const action = JSON.parse(shown.stdout) as { sends: number; checks: Array<{ detail?: string }> };
    assert.equal(action.sends, 1, 'sent once, never again');
    const ref = /\((msg_[A-Za-z0-9]+)\)/.exec(action.checks.map((c) => c.detail).join(' '))?.[1];
    assert.ok(ref, `the provider's event names the message: ${JSON.stringify(action.checks)}`);
    const resolved = await runScript(
      'cli/main.ts',
      ['ops', 'resolve', email, '--decision', 'confirmed', '--provider-ref', ref, '--reason', "in the provider's log"],
      opsEnv,
    );
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.match(resolved.stdout, /needs_review → confirmed/);
  });

  it('a second start reuses the demo operator and key, and stops cleanly', async () => {
    assert.equal(await stopStackProcess(started.child), 0, started.output());
    assert.equal(await readRunningStack(dir), undefined, 'the running-stack file is gone');
    // npm start encrypts payloads at rest: the email body of the unknown recipe is nowhere in the database.
    assert.equal((await stat(path.join(dir, 'payload-keys.json'))).mode & 0o777, 0o600);
    const files = (await readdir(dir)).filter((f) => f.startsWith('temporal.sqlite'));
    const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(path.join(dir, f)))));
    assert.ok(bytes.length > 0 && bytes.includes('send-email:v1:acme:unknown-'), 'the database holds the email action');
    assert.equal(bytes.includes('It is on its way.'), false, 'the email body is not stored in plain text');
    const token = await readFile(path.join(dir, 'demo-operator.token'), 'utf8');
    started = await startStackProcess(dbFile);
    assert.doesNotMatch(started.output(), /created now/);
    assert.equal(await readFile(path.join(dir, 'demo-operator.token'), 'utf8'), token);
  });
});
