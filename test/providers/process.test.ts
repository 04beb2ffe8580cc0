import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startSandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { ListeningLine } from '../../examples/sandbox-providers/types';
import { errorOf, get, post } from './provider-http';

const REPO_ROOT = path.resolve(__dirname, '../..');

/**
 * An address of this machine that is not 127.0.0.1: a provider bound to loopback only must refuse it, one bound
 * to 0.0.0.0 must answer on it. The first external IPv4 interface, else 127.0.0.2 (loopback too on Linux, but
 * not covered by a 127.0.0.1 bind); undefined where neither exists.
 */
function otherLocalAddress(): string | undefined {
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((info) => info && info.family === 'IPv4' && !info.internal);
  if (external) return external.address;
  return process.platform === 'linux' ? '127.0.0.2' : undefined;
}

/** Runs server.ts with the given arguments and waits for its listening line (or its exit). */
async function runProvider(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/sandbox-providers/server.ts', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 10_000;
  while (lines.length === 0 && !done && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return { child, lines, exited, stderr: () => stderr };
}

describe('sandbox provider processes', () => {
  let inventory: SandboxProvider;

  before(async () => {
    inventory = await startSandboxProvider('inventory');
  });
  after(async () => {
    await inventory.stop();
  });

  it('prints one listening line on 127.0.0.1 and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'examples/sandbox-providers/server.ts', '--kind', 'email', '--port', '0'],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const exited = once(child, 'exit');
    const deadline = Date.now() + 10_000;
    while (lines.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

    const line = ListeningLine.parse(JSON.parse(lines[0]));
    assert.equal(line.kind, 'email');
    assert.equal(line.url, `http://127.0.0.1:${line.port}`);
    assert.deepEqual((await get(line.url, '/health')).body, { ok: true, kind: 'email' });

    child.kill('SIGTERM');
    const [code, signal] = await exited;
    assert.deepEqual([code, signal], [0, null]);
    assert.equal(lines.length, 1);
  });

  it('listens on every interface with --host 0.0.0.0 and prints a loopback URL to reach it', async (t) => {
    const probe = otherLocalAddress();
    const provider = await runProvider(['--kind', 'tickets', '--port', '0', '--host', '0.0.0.0']);
    try {
      assert.equal(provider.lines.length, 1, `one listening line; stderr: ${provider.stderr()}`);
      const line = ListeningLine.parse(JSON.parse(provider.lines[0]));
      assert.equal(line.url, `http://127.0.0.1:${line.port}`);
      assert.deepEqual((await get(line.url, '/health')).body, { ok: true, kind: 'tickets' });
      if (!probe) {
        t.skip('no second local address to probe');
        return;
      }
      assert.deepEqual((await get(`http://${probe}:${line.port}`, '/health')).body, { ok: true, kind: 'tickets' });
    } finally {
      provider.child.kill('SIGTERM');
      assert.deepEqual(await provider.exited, [0, null]);
    }
  });

  it('binds only to 127.0.0.1 without --host', async (t) => {
    const probe = otherLocalAddress();
    if (!probe) {
      t.skip('no second local address to probe');
      return;
    }
    const port = new URL(inventory.url).port;
    await assert.rejects(get(`http://${probe}:${port}`, '/health'), (err: Error) => {
      assert.equal((err.cause as { code?: string } | undefined)?.code, 'ECONNREFUSED');
      return true;
    });
  });

  it('refuses an empty --host before listening', async () => {
    const provider = await runProvider(['--kind', 'email', '--port', '0', '--host', '']);
    assert.deepEqual(await provider.exited, [1, null]);
    assert.equal(provider.lines.length, 0);
    assert.match(provider.stderr(), /host: --host must not be empty/);
  });

  it('rejects with the reason when a provider exits before listening', async () => {
    const busyPort = Number(new URL(inventory.url).port);
    // Its stderr goes to /dev/null here; the error must carry the reason by itself.
    await assert.rejects(
      startSandboxProvider('payments', { port: busyPort, logFile: os.devNull }),
      /'payments' exited \(code 1\) before listening[\s\S]*EADDRINUSE/,
    );
  });

  it('answers unknown routes with 404 and oversized bodies with 413, committing nothing', async () => {
    const missing = await get(inventory.url, '/v1/nothing');
    const huge = await post(
      inventory.url,
      '/v1/reservations',
      { sku: 'x'.repeat(70_000), quantity: 1, orderId: 'o' },
      { key: 'k' },
    );
    assert.deepEqual([missing.status, errorOf(missing).code], [404, 'not_found']);
    assert.deepEqual([huge.status, errorOf(huge).code, errorOf(huge).field], [413, 'payload_too_large', 'body']);

    const ledger = await inventory.ledger();
    assert.equal(ledger.counts['reservations.create'].invalid, 1);
    assert.equal(ledger.records.reservations.length, 0);
  });
});
