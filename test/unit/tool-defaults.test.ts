import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { committed, createToolRegistry, defineTool, errorCodeOf, errorDetailsOf, found } from 'retrysafe';
import { decide } from '../../policies/decision-table';
import { mcpToolListings } from '../../adapters/mcp/mcp-tools';

/**
 * A tool needs its name, its input, its dedupe capability and its execute; everything else has a default that is
 * safe, and what decides safety is never guessed.
 */
const minimal = defineTool({
  name: 'create-invoice',
  input: z.object({ customer: z.string(), amountCents: z.number().int().positive() }),
  dedupe: 'idempotency-key',
  execute: async () => committed('inv_1'),
});

describe('a tool with only what decides its safety', () => {
  it('gets version 1, a mutation, a sentence, its name as summary, and no lag', () => {
    assert.equal(minimal.version, 1);
    assert.equal(minimal.kind, 'mutation');
    assert.equal(minimal.description, 'Performs create-invoice.');
    assert.equal(minimal.summarize({ customer: 'c', amountCents: 1 }), 'create-invoice');
    assert.equal(minimal.readAfterWriteLagMs, 0);
    const registry = createToolRegistry([minimal]);
    const intent = registry.parseIntent({ operation: 'create-invoice', customer: 'cus_1', amountCents: 990 });
    assert.equal(registry.describe(intent).riskClass, 'unclassified');
  });

  it('is confirmed by a person until it declares its risk class', () => {
    const registry = createToolRegistry([minimal]);
    const intent = registry.parseIntent({ operation: 'create-invoice', customer: 'cus_1', amountCents: 990 });
    const decision = decide(registry.describe(intent), intent);
    assert.equal(decision.mode, 'confirm');
    assert.deepEqual(decision.rows, ['unclassified.confirm']);
    const declared = createToolRegistry([{ ...minimal, riskClass: 'routine-message' }]);
    assert.equal(decide(declared.describe(intent), intent).mode, 'automatic');
  });

  it('is announced to MCP agents as destructive until it declares its risk class', () => {
    const [listing] = mcpToolListings(createToolRegistry([minimal]));
    assert.equal(listing.annotations.destructiveHint, true);
    const [declared] = mcpToolListings(createToolRegistry([{ ...minimal, riskClass: 'routine-message' }]));
    assert.equal(declared.annotations.destructiveHint, false);
  });

  it('must state its read-after-write lag when it has a lookup, and the registry names the field', () => {
    const withLookup = defineTool({
      name: 'create-ticket',
      input: z.object({ title: z.string() }),
      dedupe: 'lookup',
      execute: async () => committed('t_1'),
      lookup: async () => found('t_1'),
    });
    assert.throws(
      () => createToolRegistry([withLookup]),
      (err: unknown) => {
        assert.equal(errorCodeOf(err), 'InvalidTool');
        assert.equal(errorDetailsOf(err)?.field, 'readAfterWriteLagMs');
        assert.match((err as Error).message, /tool create-ticket: readAfterWriteLagMs is required with a lookup/);
        return true;
      },
    );
    assert.doesNotThrow(() => createToolRegistry([{ ...withLookup, readAfterWriteLagMs: 2_000 }]));
  });

  it('still refuses a tool without its dedupe capability, naming the field', () => {
    const { dedupe: _dedupe, ...noDedupe } = minimal;
    assert.throws(
      () => createToolRegistry([noDedupe as typeof minimal]),
      (err: unknown) => errorDetailsOf(err)?.field === 'dedupe',
    );
  });

  it("is acted on in the run's workflow task unless it declares long calls; the registry names a bad value", () => {
    const intent = { operation: 'create-invoice', customer: 'cus_1', amountCents: 990 };
    const short = createToolRegistry([minimal]);
    assert.equal(short.describe(short.parseIntent(intent)).longCalls, undefined);
    const long = createToolRegistry([{ ...minimal, longCalls: true }]);
    assert.equal(long.describe(long.parseIntent(intent)).longCalls, true);
    assert.throws(
      () => createToolRegistry([{ ...minimal, longCalls: 'yes' as unknown as boolean }]),
      (err: unknown) => {
        assert.equal(errorDetailsOf(err)?.field, 'longCalls');
        assert.match((err as Error).message, /longCalls must be true or false/);
        return true;
      },
    );
  });
});
