import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { Client, Connection } from '@temporalio/client';

import { ExampleClient } from '../../examples/client';
import { Ledger } from '../../examples/sandbox-providers/types';
import { exampleRegistry } from '../../examples/tools';
import type { RenewalResult } from '../../examples/workflows/renewal';
import { formatActionKey } from '../../policies/action-key';
import { DEFAULT_TASK_QUEUE } from '../../workers/config';
import { countForKey } from '../support/ledger';
import { cleanEnv } from '../support/ops-process';
import { renewalInput, uniqueEvent } from '../support/renewal-input';

const ROOT = path.resolve(__dirname, '..', '..');

interface Running {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** An npm script's entry as a user's shell starts it: its own process, the environment the test gives it. */
function run(entry: string, args: string[], env: Record<string, string>): Running {
  const proc = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, output: () => output, exited };
}

async function waitForLine(running: Running, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(running.output());
    if (match) return match;
    if (running.proc.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${running.output().slice(-3000)}`);
}

/** `KEY=value` pairs of an `export …` line. */
function exportsOf(line: string): Record<string, string> {
  return Object.fromEntries(
    line
      .replace(/^\s*export\s+/, '')
      .trim()
      .split(/\s+/)
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
}

describe('npm run cluster, npm run providers and npm run worker, as a user runs them', () => {
  const started: Running[] = [];
  after(async () => {
    for (const p of started) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  });

  it('starts the cluster, says how to point a worker at it, renews once through it, and stops on Ctrl-C', async () => {
    const cluster = run('scripts/cluster.ts', ['--no-build'], {});
    started.push(cluster);
    const ready = await waitForLine(cluster, /Temporal cluster ready in ([\d.]+) s/, 120_000);
    assert.ok(Number(ready[1]) > 0);
    const temporalEnv = exportsOf((await waitForLine(cluster, /^\s*export TEMPORAL_ADDRESS=.*$/m, 5_000))[0]);
    assert.match(temporalEnv.TEMPORAL_ADDRESS, /^127\.0\.0\.1:\d+$/);
    assert.equal(temporalEnv.TEMPORAL_NAMESPACE, 'default');
    // The worker keeps the action ledger in the cluster's PostgreSQL: it does not start without one.
    assert.match(temporalEnv.RETRYSAFE_LEDGER, /^postgres:\/\/.*\/retrysafe_ledger/);
    const logs = (await waitForLine(cluster, /service logs: (\S+)\/logs\//, 5_000))[1];
    assert.ok(existsSync(logs), 'the cluster folder exists while it runs');

    const providers = run('scripts/providers.ts', [], {});
    started.push(providers);
    const urls = exportsOf((await waitForLine(providers, /^export RETRYSAFE_PAYMENTS_URL=.*$/m, 60_000))[0]);
    const worker = run('examples/worker.ts', [], { ...temporalEnv, ...urls });
    started.push(worker);

    const connection = await Connection.connect({ address: temporalEnv.TEMPORAL_ADDRESS });
    try {
      const client = new Client({ connection, namespace: temporalEnv.TEMPORAL_NAMESPACE });
      const tools = exampleRegistry({
        payments: urls.RETRYSAFE_PAYMENTS_URL,
        email: urls.RETRYSAFE_EMAIL_URL,
        tickets: urls.RETRYSAFE_TICKETS_URL,
        inventory: urls.RETRYSAFE_INVENTORY_URL,
        shipping: urls.RETRYSAFE_SHIPPING_URL,
      });
      const retrysafe = new ExampleClient(client, { taskQueue: DEFAULT_TASK_QUEUE, tools });
      const input = renewalInput(uniqueEvent('cluster-command'));
      const result = (await (await retrysafe.startRenewal(input)).result()) as RenewalResult;
      assert.equal(result.status, 'renewed');
      const ledger = Ledger.parse(await (await fetch(`${urls.RETRYSAFE_PAYMENTS_URL}/admin/ledger`)).json());
      const key = formatActionKey({ operation: 'charge', version: 1, tenant: 'acme', eventId: input.eventId });
      assert.equal(countForKey(ledger, key).records, 1, 'one charge at the provider');
    } finally {
      await connection.close();
    }

    worker.proc.kill('SIGTERM');
    providers.proc.kill('SIGINT');
    cluster.proc.kill('SIGINT');
    assert.deepEqual(await cluster.exited, { code: 0, signal: null }, cluster.output().slice(-2000));
    assert.match(cluster.output(), /stopped/);
    assert.ok(!existsSync(logs), 'the cluster folder is gone after Ctrl-C');
    assert.deepEqual((await providers.exited).code, 0);
    await worker.exited;
  });

  it('leaves no process and no folder behind when the launcher itself is SIGKILLed', async () => {
    const cluster = run('scripts/cluster.ts', ['--no-build'], {});
    started.push(cluster);
    await waitForLine(cluster, /Temporal cluster ready/, 120_000);
    const pids = [...(await waitForLine(cluster, /services \(pid\): (.*);/, 5_000))[1].matchAll(/\d+/g)].map(Number);
    const [, pgPid, pgData] = await waitForLine(cluster, /PostgreSQL \S+ \(pid (\d+)\), data (\S+)/, 5_000);
    const logs = (await waitForLine(cluster, /service logs: (\S+)\/logs\//, 5_000))[1];
    assert.equal(pids.length, 4);
    const folders = [logs, path.dirname(pgData)];
    for (const folder of folders) assert.ok(existsSync(folder), folder);

    cluster.proc.kill('SIGKILL');
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 20_000;
    const left = () => [
      ...[...pids, Number(pgPid)].filter(alive).map((pid) => `pid ${pid}`),
      ...folders.filter((folder) => existsSync(folder)),
    ];
    while (left().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.deepEqual(left(), [], 'the watchdogs stop the services and PostgreSQL and delete their folders');
  });
});
