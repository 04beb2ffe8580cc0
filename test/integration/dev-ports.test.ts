import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planPorts, type PortRequest } from '../../cli/dev/port-plan';
import { DEFAULT_METRICS_PORT } from '../../cli/dev/dev-stack';
import { resolveTemporalCli } from '../../cli/toolchain/resolve-temporal';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the ports retrysafe dev advertises', () => {
  const taken = new Set([7233, 9464]);
  let next = 20_000;
  const deps = { isFree: async (port: number) => !taken.has(port), freePort: async () => next++ };
  const request = (over: Partial<Record<PortRequest['option'], [number | null, boolean]>>): PortRequest[] =>
    (['--port', '--ui-port', '--approvals-port', '--metrics-port'] as const).map((option) => {
      const [port, given] = over[option] ?? [0, true];
      return { option, port, given };
    });

  it('swaps a default port that is taken for a free one, and says so', async () => {
    const plan = await planPorts(request({ '--port': [7233, false], '--metrics-port': [9464, false] }), deps);
    assert.deepEqual(plan, {
      ok: true,
      ports: { '--port': 20_000, '--ui-port': 0, '--approvals-port': 0, '--metrics-port': 20_001 },
      notes: [
        'port 7233 (--port) is in use: took 20000 instead',
        'port 9464 (--metrics-port) is in use: took 20001 instead',
      ],
    });
  });

  it('stops on a port the person chose that is taken, naming the option', async () => {
    const plan = await planPorts(request({ '--metrics-port': [9464, true] }), deps);
    assert.deepEqual(plan, {
      ok: false,
      message:
        '--metrics-port: port 9464 on 127.0.0.1 is in use; pass another port, --metrics-port 0 for any free port, ' +
        '--metrics-port none for none',
    });
  });

  it('leaves free ports, 0 and none as they are', async () => {
    const plan = await planPorts(request({ '--ui-port': [null, false], '--approvals-port': [4180, false] }), deps);
    assert.deepEqual(plan, {
      ok: true,
      ports: { '--port': 0, '--ui-port': null, '--approvals-port': 4180, '--metrics-port': 0 },
      notes: [],
    });
  });
});

describe('retrysafe dev with its metrics port taken', () => {
  let dir: string;
  let holder: net.Server | undefined;
  let heldPort: number;
  let env: NodeJS.ProcessEnv;
  const retrysafeDev = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'cli/main.ts'), 'dev', '--dir', path.join(dir, '.retrysafe'), ...args],
        { cwd: ROOT, env, encoding: 'utf8', timeout: 180_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code) : 0, stdout, stderr }),
      );
    });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-dev-ports-'));
    env = { ...process.env, TEMPORAL_CLI: (await resolveTemporalCli()).path! };
    for (const name of Object.keys(env)) if (/^(RETRYSAFE_|TEMPORAL_(?!CLI$))/.test(name)) delete env[name];
    // The default metrics port held by another process: this test's, or one already running on the machine.
    holder = net.createServer();
    heldPort = DEFAULT_METRICS_PORT;
    await new Promise<void>((resolve) => {
      holder!.once('error', () => {
        holder = undefined;
        resolve();
      });
      holder!.listen({ port: heldPort, host: '127.0.0.1', exclusive: true }, () => resolve());
    });
  });
  after(async () => {
    if (holder) await new Promise((resolve) => holder!.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('stops before it starts anything when --metrics-port names the taken port', async () => {
    const run = await retrysafeDev([
      ...'--port 0 --ui-port none --approvals-port 0 --metrics-port'.split(' '),
      String(heldPort),
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stderr.trim(),
      `retrysafe dev: --metrics-port: port ${heldPort} on 127.0.0.1 is in use; pass another port, --metrics-port 0 for ` +
        'any free port, --metrics-port none for none',
    );
    assert.equal(run.stdout, '', 'nothing advertised');
    assert.equal(existsSync(path.join(dir, '.retrysafe')), false, 'nothing started or written');
  });

  it(
    'gives the worker another metrics port when the default one is taken, and prints that one',
    { timeout: 200_000 },
    async () => {
      const run = await retrysafeDev(['--port', '0', '--ui-port', 'none', '--approvals-port', '0', '--once']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, new RegExp(`port ${heldPort} \\(--metrics-port\\) is in use: took \\d+ instead`));
      const address = /^RETRYSAFE_METRICS_ADDRESS=(.*)$/m.exec(
        readFileSync(path.join(dir, '.retrysafe', 'dev.env'), 'utf8'),
      )?.[1];
      assert.match(address ?? '', /^127\.0\.0\.1:\d+$/);
      assert.notEqual(address, `127.0.0.1:${heldPort}`);
      assert.match(run.stdout, new RegExp(`^metrics: +http://${address!.replace(/\./g, '\\.')}/metrics`, 'm'));
    },
  );
});
