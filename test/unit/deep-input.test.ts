import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import { callRetrysafeTool } from '../../adapters/mcp/mcp-tools';
import { claimForAgent } from '../../adapters/agent-claim';
import { RetrysafeClient } from '../../client';
import { exampleRegistry } from '../../examples/tools';
import { errorCodeOf, errorDetailsOf } from '../../policies/errors';
import { findCardNumberField, maskCardNumbersIn } from '../../policies/card-numbers';
import { MAX_JSON_DEPTH, MAX_JSON_NODES, checkJsonShape } from '../../policies/json-shape';
import { canonicalJson, MAX_HASHED_DEPTH } from '../../policies/request-hash';

/**
 * Input nested thousands of levels deep, or very wide, is refused with a typed error naming the deepest field
 * reached, the same in any process; agents are told it was refused, not that it may be under way. Nothing here
 * reaches Temporal: the refusal comes before any claim (the client below points at no server).
 */
const registry = exampleRegistry();

/** `{ note: { note: { … 'x' } } }`, `depth` levels of objects. */
function nested(depth: number, leaf: unknown = 'x'): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { note: value };
  return value;
}

const ticket = (extra: unknown) => ({
  operation: 'create-ticket',
  externalRef: 'T-1',
  title: 'A title',
  body: 'A body',
  priority: 'normal',
  extra,
});

describe('deep and wide input', () => {
  for (const depth of [40, 3_000, 4_000, 100_000]) {
    it(`refuses an intent nested ${depth} levels deep with InvalidIntent naming the deepest field reached`, () => {
      assert.throws(
        () => registry.parseIntent(ticket(nested(depth))),
        (err: unknown) => {
          assert.equal(errorCodeOf(err), 'InvalidIntent');
          const details = errorDetailsOf(err)!;
          assert.equal(details.reason, 'too-deep');
          const field = String(details.field);
          assert.equal(field.split('.').length, MAX_JSON_DEPTH, field);
          assert.ok(field.startsWith('extra.note.note'), field);
          assert.match((err as Error).message, /nests deeper than 32 levels; the deepest field reached is extra\.note/);
          return true;
        },
      );
    });
  }

  it('takes an intent just inside the limit to its schema (which refuses the unknown field, naming it)', () => {
    assert.throws(
      () => registry.parseIntent(ticket(nested(MAX_JSON_DEPTH - 2))),
      (err: unknown) => errorCodeOf(err) === 'InvalidIntent' && errorDetailsOf(err)?.reason !== 'too-deep',
    );
  });

  it('refuses a very wide intent and one that holds what JSON cannot carry', () => {
    assert.throws(
      () => registry.parseIntent(ticket(new Array(MAX_JSON_NODES + 1).fill(1))),
      (err: unknown) => errorCodeOf(err) === 'InvalidIntent' && errorDetailsOf(err)?.reason === 'too-large',
    );
    assert.throws(
      () => registry.parseIntent(ticket({ when: () => 1 })),
      (err: unknown) => errorDetailsOf(err)?.field === 'extra.when' && errorDetailsOf(err)?.reason === 'not-json',
    );
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(
      () => checkJsonShape(cycle),
      (err: unknown) => errorDetailsOf(err)?.reason === 'too-deep',
    );
  });

  it('gives the same answer in a fresh process with a small stack', () => {
    const script = `
      const { exampleRegistry } = require(${JSON.stringify(path.resolve(__dirname, '../../examples/tools'))});
      let v = 'x'; for (let i = 0; i < 4000; i++) v = { note: v };
      try { exampleRegistry().parseIntent({ operation: 'create-ticket', externalRef: 'T', title: 't', body: 'b', priority: 'normal', extra: v }); }
      catch (e) { process.stdout.write(JSON.stringify({ name: e.name, field: e.details && e.details.field })); }`;
    const run = spawnSync(process.execPath, ['--stack-size=200', '--import', 'tsx', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { name: string; field: string };
    assert.equal(out.name, 'InvalidIntent');
    assert.equal(out.field.split('.').length, MAX_JSON_DEPTH);
  });

  it('scans for card numbers and masks them without recursion, at any depth', () => {
    const deep = nested(50_000, 'pay with 4242 4242 4242 4242');
    const found = findCardNumberField(deep);
    assert.equal(found?.field.split('.').length, 50_000);
    const masked = maskCardNumbersIn(nested(50_000, 'pay with 4242 4242 4242 4242'));
    let leaf: unknown = masked;
    while (typeof leaf === 'object' && leaf !== null) leaf = (leaf as { note: unknown }).note;
    assert.equal(leaf, 'pay with •••• 4242');
  });

  it('refuses to hash a value nested past its limit, naming the path', () => {
    assert.throws(
      () => canonicalJson(nested(MAX_HASHED_DEPTH + 5)),
      (err: unknown) => errorCodeOf(err) === 'UnhashableValue' && /nests deeper than 128/.test((err as Error).message),
    );
  });

  it('tells an agent the call was refused (through the agent adapter and the MCP tool), not that it may be under way', async () => {
    // A client of a server that is not there: a refusal must come before any call to it.
    const retrysafe = new RetrysafeClient(new Client(), { tools: registry });
    const { operation: _o, ...args } = ticket(nested(4_000));
    const viaAdapter = await claimForAgent(
      'ai-sdk',
      { retrysafe, registry, tenant: 'acme', eventId: 'e-1' },
      'create-ticket',
      args,
    );
    assert.ok(!('status' in viaAdapter));
    assert.equal(viaAdapter.error.code, 'InvalidIntent');
    assert.equal(viaAdapter.next, undefined, 'a refusal says nothing of an action under way');
    assert.match(viaAdapter.error.message, /nests deeper than 32 levels/);

    const viaMcp = await callRetrysafeTool(
      { retrysafe, registry, tenant: 'acme', claimant: 'agent', waitMs: 1_000 },
      'create-ticket',
      { ...args, eventId: 'e-1' },
    );
    assert.equal(viaMcp.isError, true);
    assert.equal((viaMcp.structuredContent as { error: { code: string } }).error.code, 'InvalidIntent');
    assert.doesNotMatch(viaMcp.content[0].text, /under way/);
  });
});
