import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { countForKey } from '../support/ledger';
import { cleanEnv, runScript } from '../support/ops-process';
import { uniqueEvent } from '../support/renewal-input';

/**
 * retrysafe as an MCP server, called by the official SDK's Client (this process) over stdio (the server a child
 * it spawns) and over Streamable HTTP (the server its own process). The worker running the charge is SIGKILLed
 * after the payments provider commits; the client's call waits through the recovery, and the client's repeated
 * call for the same event returns the first outcome. Charges are counted at the provider.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'cli', 'main.ts');

interface ChargeResult {
  status: string;
  key: string;
  providerRef?: string;
  next: string;
  webUiUrl?: string;
}

describe('retrysafe as an MCP server (a real MCP client, a worker SIGKILLed after the provider commits)', () => {
  let stack: Stack;
  let dir: string;
  let serverEnv: Record<string, string>;
  let agentsFile: string;
  const children: { kill(): void }[] = [];

  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-mcp-'));
    agentsFile = path.join(dir, 'agents.json');
    serverEnv = {
      ...cleanEnv(),
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
      RETRYSAFE_TASK_QUEUE: stack.taskQueue,
      RETRYSAFE_LEDGER: stack.workerEnv.RETRYSAFE_LEDGER,
      // The tools the stack's workers register, as a team names its own module.
      RETRYSAFE_TOOLS_MODULE: path.join(ROOT, 'examples', 'tools', 'registered.ts'),
      // Its data folder is the test's, so nothing of a local `npm start` (keys, ledger) leaks in.
      RETRYSAFE_OPERATORS_FILE: path.join(dir, 'operators.json'),
    };
  });
  after(async () => {
    for (const child of children) child.kill();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const chargeArgs = (eventId: string, amountCents: number) => ({
    eventId,
    amountCents,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: `ord-${eventId}`,
  });

  async function atProvider(key: string) {
    return countForKey(await stack.providers.payments.ledger(), key);
  }

  /** Runs the crash case through one transport: first call across a SIGKILL, the same call again, a changed one. */
  async function crashCase(transport: Transport, label: string): Promise<void> {
    const client = new Client({ name: `test-agent-${label}`, version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const charge = tools.find((t) => t.name === 'charge');
      assert.ok(charge, `the registered tools are listed: ${tools.map((t) => t.name).join(', ')}`);
      assert.deepEqual(
        [charge.annotations?.idempotentHint, charge.annotations?.destructiveHint, charge.annotations?.readOnlyHint],
        [true, true, false],
        'truthful annotations: keyed by its arguments, money movement is destructive',
      );
      assert.ok((charge.inputSchema.required ?? []).includes('eventId'), 'the business event is a required argument');
      assert.ok(
        !tools.some((t) => /approve|resolve|confirm|reject/.test(t.name)),
        'no tool can approve or resolve an action',
      );

      const eventId = uniqueEvent(`mcp-${label}`);
      const doomed = await stack.startWorker({ name: `doomed-${label}`, crashAt: 'after-commit:charge' });
      const firstCall = client.callTool({ name: 'charge', arguments: chargeArgs(eventId, 1_990) }, undefined, {
        timeout: 90_000,
      });
      assert.equal((await doomed.exited).signal, 'SIGKILL', 'the worker died right after the provider committed');
      const successor = await stack.startWorker({ name: `successor-${label}` });
      try {
        const first = (await firstCall) as { structuredContent?: ChargeResult; isError?: boolean };
        const outcome = first.structuredContent!;
        assert.equal(outcome.status, 'confirmed', JSON.stringify(first));
        assert.match(outcome.key, new RegExp(`^charge:v1:acme:.*${eventId}`));
        assert.ok(outcome.providerRef?.startsWith('ch_'), JSON.stringify(outcome));

        const again = (await client.callTool({ name: 'charge', arguments: chargeArgs(eventId, 1_990) })) as {
          structuredContent?: ChargeResult;
        };
        assert.deepEqual(
          [again.structuredContent?.status, again.structuredContent?.key, again.structuredContent?.providerRef],
          [outcome.status, outcome.key, outcome.providerRef],
          'the repeated call for the same event returns the first outcome',
        );

        const changed = (await client.callTool({ name: 'charge', arguments: chargeArgs(eventId, 2_990) })) as {
          isError?: boolean;
          content: { text: string }[];
        };
        assert.equal(changed.isError, true);
        assert.match(changed.content[0].text, /^IntentMismatch: /, 'a changed request for the same event is refused');

        const counted = await atProvider(outcome.key);
        assert.equal(counted.records, 1, 'one charge at the provider');
        assert.equal(counted.committed, 1, 'committed once; any later request was answered with the original');
      } finally {
        await successor.stop();
      }
    } finally {
      await client.close();
    }
  }

  it('over stdio: the repeated call returns the first outcome, and the provider counts one charge', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', CLI, 'mcp', 'stdio', '--tenant', 'acme', '--agent', 'stdio-test'],
      cwd: ROOT,
      env: serverEnv,
      stderr: 'pipe',
    });
    await crashCase(transport, 'stdio');
  });

  it('over Streamable HTTP: a tenant-scoped token is required, and the crash case holds the same', async () => {
    const added = await run(['add-agent', '--agents-file', agentsFile, '--name', 'http-test', '--tenant', 'acme']);
    assert.equal(added.code, 0, added.stderr);
    const token = added.stdout.trim();
    assert.match(token, /^rsa_/);
    const stored = await readFile(agentsFile, 'utf8');
    assert.ok(!stored.includes(token), 'the agents file holds only the token’s digest');

    const { url } = await startHttpServer();
    for (const [authorization, why] of [
      [undefined, 'no token'],
      ['Bearer rsa_not-a-real-token', 'an unknown token'],
    ] as const) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(res.status, 401, `${why} is refused before the MCP layer`);
    }
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await crashCase(transport, 'http');
  });

  const run = (args: string[]) => runScript(path.join('cli', 'main.ts'), ['mcp', ...args], serverEnv);

  async function startHttpServer(): Promise<{ url: string }> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CLI, 'mcp', 'http', '--agents-file', agentsFile, '--port', '0'],
      { cwd: ROOT, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push({ kill: () => child.kill('SIGTERM') });
    let output = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the MCP HTTP server did not start:\n${output}`)), 30_000);
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.stdout.on('data', (c: Buffer) => {
        output += c.toString();
        const line = output.split('\n').find((l) => l.includes('"mcp-ready"'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as { url: string });
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the MCP HTTP server exited (${code}):\n${output}`));
      });
    });
  }
});
