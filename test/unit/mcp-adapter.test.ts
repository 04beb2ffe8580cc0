import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { exampleRegistry } from '../../examples/tools';
import {
  RetrysafeError,
  committed,
  createToolRegistry,
  defineTool,
  type ActionSnapshot,
  type RetrysafeClient,
} from 'retrysafe';
import {
  type McpCallDeps,
  agentForToken,
  callRetrysafeTool,
  mcpToolListings,
  newAgentToken,
  readAgentsFile,
} from 'retrysafe/mcp';

/** What an agents file stores of a token: its SHA-256, as lower-case hex. */
const tokenSha256 = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const registry = exampleRegistry();

describe('MCP tool listings', () => {
  const listings = mcpToolListings(registry);

  it('lists every registered tool, with the business event as its first required argument', () => {
    assert.deepEqual(
      listings.map((t) => t.name),
      [...registry.names],
    );
    for (const t of listings) {
      assert.equal(t.inputSchema.required[0], 'eventId', t.name);
      assert.ok('step' in t.inputSchema.properties && !t.inputSchema.required.includes('step'), t.name);
      assert.equal(t.annotations.idempotentHint, true, `${t.name}: keyed by its arguments`);
    }
  });

  it('marks money movement destructive and messages additive, from the tools’ risk classes', () => {
    const byName = Object.fromEntries(listings.map((t) => [t.name, t.annotations]));
    assert.equal(byName.charge.destructiveHint, true);
    assert.equal(byName.refund.destructiveHint, true);
    assert.equal(byName['send-email'].destructiveHint, false);
    assert.equal(byName['create-ticket'].readOnlyHint, false);
  });

  it('refuses a tool whose input has its own eventId field, naming it', () => {
    const clash = defineTool({
      name: 'clash',
      version: 1,
      description: 'A test tool.',
      input: z.object({ eventId: z.string() }),
      kind: 'mutation',
      dedupe: 'idempotency-key',
      readAfterWriteLagMs: 0,
      riskClass: 'routine-message',
      summarize: () => 'clash',
      execute: async () => committed('x'),
    });
    assert.throws(() => mcpToolListings(createToolRegistry([clash])), /tool clash: .*field named eventId/);
  });
});

describe('MCP tool calls', () => {
  const claims: unknown[][] = [];
  let answer: ActionSnapshot;
  const deps: McpCallDeps = {
    retrysafe: {
      claimAction: async (...args: unknown[]) => {
        claims.push(args);
        return answer;
      },
    } as unknown as RetrysafeClient,
    registry,
    tenant: 'acme',
    claimant: 'unit',
    waitMs: 1_000,
    webUiUrl: (key) => `http://ui.test/workflows/${key}`,
  };
  const snapshot = (status: string, extra: Partial<ActionSnapshot> = {}) =>
    ({ key: 'charge:v1:acme:e1', status, requestHash: 'h'.repeat(64), summary: 'charge', ...extra }) as ActionSnapshot;

  it('claims for the server’s tenant, with the event and step as the key and the rest as the intent', async () => {
    claims.length = 0;
    answer = snapshot('confirmed', { providerRef: 'ch_1' });
    const result = await callRetrysafeTool(deps, 'charge', { eventId: 'e1', step: 'first', amountCents: 5 });
    assert.deepEqual(claims[0].slice(0, 2), [
      { tenant: 'acme', eventId: 'e1', step: 'first', claimant: 'mcp:unit' },
      { amountCents: 5, operation: 'charge' },
    ]);
    assert.deepEqual(claims[0][2], { wait: true, timeoutMs: 1_000 });
    assert.equal(result.isError, undefined);
    assert.equal(result.structuredContent.providerRef, 'ch_1');
    assert.equal(result.structuredContent.webUiUrl, 'http://ui.test/workflows/charge:v1:acme:e1');
  });

  it('refuses a call without an event, naming the argument, and claims nothing', async () => {
    claims.length = 0;
    for (const args of [{}, { eventId: '' }, { eventId: 7 }]) {
      const result = await callRetrysafeTool(deps, 'charge', args);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /^InvalidIntent: eventId: required/);
    }
    const badStep = await callRetrysafeTool(deps, 'charge', { eventId: 'e1', step: '' });
    assert.match(badStep.content[0].text, /^InvalidIntent: step: /);
    const unknown = await callRetrysafeTool(deps, 'wire-money', { eventId: 'e1' });
    assert.match(unknown.content[0].text, /^UnknownOperation: no tool named wire-money/);
    assert.equal(claims.length, 0);
  });

  it('answers a refused claim as an error result with its code', async () => {
    const refusing: McpCallDeps = {
      ...deps,
      retrysafe: {
        claimAction: async () => {
          throw new RetrysafeError('IntentMismatch', 'another request under this key', {});
        },
      } as unknown as RetrysafeClient,
    };
    const result = await callRetrysafeTool(refusing, 'charge', { eventId: 'e1' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^IntentMismatch: another request under this key/);
  });

  it('answers a failure after the claim may have landed as “call again with the same event”, not a refusal', async () => {
    const unavailable: McpCallDeps = {
      ...deps,
      retrysafe: {
        claimAction: async () => {
          throw new Error('14 UNAVAILABLE: connection refused');
        },
      } as unknown as RetrysafeClient,
    };
    const result = await callRetrysafeTool(unavailable, 'charge', { eventId: 'e1' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^Unavailable: .*Call again with the same event/);
    assert.match(String(result.structuredContent.next), /do not retry under another event/);
  });

  it('answers unknown, needs_review and awaiting_confirmation as results, saying what happens next', async () => {
    const resultFor = async (status: string) => {
      answer = snapshot(status);
      return callRetrysafeTool(deps, 'charge', { eventId: 'e1' });
    };
    for (const status of ['unknown', 'needs_review', 'awaiting_confirmation', 'dispatching']) {
      const result = await resultFor(status);
      assert.equal(result.isError, undefined, `${status} is not an error the model should retry`);
      assert.match(String(result.structuredContent.next), /[Cc]all again/, status);
    }
    assert.match(String((await resultFor('unknown')).structuredContent.next), /do not retry under another/);
    assert.match(String((await resultFor('awaiting_confirmation')).structuredContent.next), /cannot approve/);
    assert.equal((await resultFor('failed')).isError, true);
  });
});

describe('the MCP agents file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-agents-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds an agent by its token’s digest, and nobody for another token', async () => {
    const token = newAgentToken();
    const file = path.join(dir, 'ok.json');
    await writeFile(
      file,
      JSON.stringify({ agents: [{ name: 'bot', tenant: 'acme', tokenSha256: tokenSha256(token) }] }),
    );
    const agents = await readAgentsFile(file);
    assert.equal(agentForToken(agents, token)?.tenant, 'acme');
    assert.equal(agentForToken(agents, `${token}x`), undefined);
    assert.equal(agentForToken(agents, undefined), undefined);
  });

  it('names the field of a broken entry, and refuses an agent listed twice', async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ agents: [{ name: 'bot', tenant: 'Acme!', tokenSha256: 'x' }] }));
    await assert.rejects(readAgentsFile(file), /agents\.0\.tenant: a tenant ID/);
    const entry = { name: 'bot', tenant: 'acme', tokenSha256: tokenSha256('t') };
    await writeFile(file, JSON.stringify({ agents: [entry, entry] }));
    await assert.rejects(readAgentsFile(file), /agent bot is listed twice/);
    await assert.rejects(readAgentsFile(path.join(dir, 'missing.json')), /agents file .*missing\.json/);
  });
});
