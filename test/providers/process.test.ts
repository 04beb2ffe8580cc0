import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startSandboxProvider } from '../../sandbox-providers/spawn';
import type { SandboxProvider } from '../../sandbox-providers/spawn';
import { ListeningLine } from '../../sandbox-providers/types';
import { errorOf, get, post } from './provider-http';

const REPO_ROOT = path.resolve(__dirname, '../..');

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
      ['--import', 'tsx', 'sandbox-providers/server.ts', '--kind', 'email', '--port', '0'],
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
