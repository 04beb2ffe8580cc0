import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ChargeIntent, Intent, OPERATIONS } from '../../policies/intents';
import { RetrysafeError } from '../../policies/errors';
import type { ErrorCode } from '../../policies/errors';
import {
  ASK_HUMAN_TOOL,
  STOP_TOOL,
  TOOL_SCHEMA_VERSION,
  buildPlannerPrompt,
  interpretPlannerOutput,
  parsePlannerOutput,
  promptHash,
  toolSchemaVersion,
  toolSchemas,
} from '../../policies/planner-contract';
import type { PlannerFacts, PlannerOutputParts, ToolSchema } from '../../policies/planner-contract';

const CHARGE_ARGS = {
  amountCents: 4990,
  currency: 'usd',
  customerId: 'cus_1842',
  paymentMethod: 'pm_card_visa',
  merchantReference: 'A-1842',
};

function tool(tools: ToolSchema[], name: string): ToolSchema['function'] {
  const found = tools.find((t) => t.function.name === name);
  assert.ok(found, `no tool named ${name}`);
  return found.function;
}

function assertInvalid(raw: PlannerOutputParts, code: ErrorCode, field: string): RetrysafeError {
  let caught: RetrysafeError | undefined;
  assert.throws(
    () => parsePlannerOutput(raw),
    (err: unknown) => {
      assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
      assert.equal(err.code, code);
      assert.equal(err.details.field, field);
      caught = err;
      return true;
    },
  );
  return caught!;
}

describe('tool schemas derived from the zod intents', () => {
  const tools = toolSchemas();

  it('offers one function tool per operation, plus stop and ask_human', () => {
    assert.deepEqual(
      tools.map((t) => t.function.name),
      [...OPERATIONS, STOP_TOOL, ASK_HUMAN_TOOL],
    );
    for (const t of tools) {
      assert.equal(t.type, 'function');
      assert.ok(t.function.description.length > 0, `${t.function.name} has a description`);
      assert.equal(t.function.parameters.type, 'object');
      assert.equal(t.function.parameters.$schema, undefined, 'no $schema inside a tool');
    }
  });

  it('names the required fields and leaves out the operation literal the tool name carries', () => {
    const charge = tool(tools, 'charge').parameters as {
      properties: Record<string, { type?: string }>;
      required: string[];
      additionalProperties: boolean;
    };
    assert.deepEqual(charge.required, ['amountCents', 'currency', 'customerId', 'paymentMethod', 'merchantReference']);
    assert.equal(charge.properties.operation, undefined);
    assert.equal(charge.properties.amountCents.type, 'integer', 'money is integer minor units');
    assert.equal(charge.additionalProperties, false);
    const shipment = tool(tools, 'create-shipment').parameters as { required: string[] };
    assert.deepEqual(shipment.required, ['shipmentRef', 'orderId', 'address']);
    assert.deepEqual((tool(tools, STOP_TOOL).parameters as { required: string[] }).required, ['reason']);
    assert.deepEqual((tool(tools, ASK_HUMAN_TOOL).parameters as { required: string[] }).required, ['question']);
  });

  it('has a schema version that is stable across calls', () => {
    assert.match(TOOL_SCHEMA_VERSION, /^[0-9a-f]{12}$/);
    assert.equal(toolSchemaVersion(toolSchemas()), TOOL_SCHEMA_VERSION);
    assert.equal(toolSchemaVersion(toolSchemas()), toolSchemaVersion(toolSchemas()));
  });

  it('changes the schema version when an intent schema changes', () => {
    const withNote = ChargeIntent.extend({ note: z.string().optional() });
    const changed = Intent.options.map((o) => (o === ChargeIntent ? withNote : o));
    assert.notEqual(toolSchemaVersion(toolSchemas(changed)), TOOL_SCHEMA_VERSION);
    const tighter = ChargeIntent.extend({ amountCents: z.number().int().positive().max(500) });
    const changedLimit = Intent.options.map((o) => (o === ChargeIntent ? tighter : o));
    assert.notEqual(toolSchemaVersion(toolSchemas(changedLimit)), TOOL_SCHEMA_VERSION);
  });
});

describe('parsePlannerOutput', () => {
  it('turns a valid tool call into a normalized act decision with the text as rationale', () => {
    const decision = parsePlannerOutput({
      toolName: 'charge',
      arguments: JSON.stringify({ ...CHARGE_ARGS, currency: ' USD ', description: '  Annual renewal ' }),
      text: 'The renewal is due; charging the card on file.',
    });
    assert.deepEqual(decision, {
      kind: 'act',
      intent: { operation: 'charge', ...CHARGE_ARGS, description: 'Annual renewal' },
      rationale: 'The renewal is due; charging the card on file.',
    });
  });

  it('accepts an operation field that agrees with the tool name', () => {
    const decision = parsePlannerOutput({
      toolName: 'charge',
      arguments: JSON.stringify({ operation: 'charge', ...CHARGE_ARGS }),
    });
    assert.equal(decision.kind, 'act');
  });

  it('reads stop and ask_human as their own decisions, never as actions', () => {
    assert.deepEqual(parsePlannerOutput({ toolName: 'stop', arguments: '{"reason":" done "}' }), {
      kind: 'stop',
      reason: 'done',
    });
    assert.deepEqual(parsePlannerOutput({ toolName: 'ask_human', arguments: '{"question":"Which address?"}' }), {
      kind: 'ask-human',
      question: 'Which address?',
    });
  });

  it('refuses a float amount, naming the field', () => {
    const err = assertInvalid(
      { toolName: 'charge', arguments: JSON.stringify({ ...CHARGE_ARGS, amountCents: 49.9 }) },
      'InvalidIntent',
      'amountCents',
    );
    assert.match(err.message, /integer/);
  });

  it('refuses an unknown tool', () => {
    assertInvalid({ toolName: 'wire_transfer', arguments: '{}' }, 'UnknownOperation', 'toolName');
  });

  it('refuses arguments that are not JSON, or not an object', () => {
    assertInvalid({ toolName: 'charge', arguments: '{"amountCents": 4990,' }, 'InvalidIntent', 'arguments');
    assertInvalid({ toolName: 'charge', arguments: '[1,2]' }, 'InvalidIntent', 'arguments');
  });

  it('refuses text without a tool call', () => {
    assertInvalid({ text: 'I would charge 49.90 now.' }, 'InvalidIntent', 'toolName');
    assertInvalid({}, 'InvalidIntent', 'toolName');
  });

  it('refuses extra, missing and nested bad fields, naming each', () => {
    assertInvalid(
      { toolName: 'charge', arguments: JSON.stringify({ ...CHARGE_ARGS, tip: 100 }) },
      'InvalidIntent',
      'tip',
    );
    const { customerId: _omit, ...missing } = CHARGE_ARGS;
    assertInvalid({ toolName: 'charge', arguments: JSON.stringify(missing) }, 'InvalidIntent', 'customerId');
    const shipment = {
      shipmentRef: 's-1',
      orderId: 'A-1',
      address: { line1: '1 Main St', city: 'Oslo', postalCode: '0150', country: 'Norway' },
    };
    assertInvalid(
      { toolName: 'create-shipment', arguments: JSON.stringify(shipment) },
      'InvalidIntent',
      'address.country',
    );
    assertInvalid({ toolName: 'stop', arguments: '{}' }, 'InvalidIntent', 'reason');
  });

  it('refuses an operation field that contradicts the tool name', () => {
    assertInvalid(
      { toolName: 'charge', arguments: JSON.stringify({ operation: 'refund', ...CHARGE_ARGS }) },
      'InvalidIntent',
      'operation',
    );
  });

  it('interpretPlannerOutput records schema violations as invalid decisions instead of throwing', () => {
    const raw = '{"tool":"charge"}';
    const decision = interpretPlannerOutput(
      { toolName: 'charge', arguments: JSON.stringify({ ...CHARGE_ARGS, amountCents: 49.9 }) },
      raw,
    );
    assert.equal(decision.kind, 'invalid');
    assert.ok(decision.kind === 'invalid');
    assert.equal(decision.error.field, 'amountCents');
    assert.equal(decision.error.code, 'InvalidIntent');
    assert.equal(decision.rawOutput, raw);
  });
});

describe('planner prompt', () => {
  const facts: PlannerFacts = {
    tenant: 'acme',
    eventId: 'renewal-2026-08-28-01',
    goal: 'Renew order A-1842',
    facts: { order: { id: 'A-1842', amountCents: 4990 }, customer: { tier: 'gold' } },
    history: [],
  };

  it('hashes the same facts the same, whatever their key order', () => {
    const reordered: PlannerFacts = {
      ...facts,
      facts: { customer: { tier: 'gold' }, order: { amountCents: 4990, id: 'A-1842' } },
    };
    assert.equal(promptHash(buildPlannerPrompt(facts)), promptHash(buildPlannerPrompt(reordered)));
    assert.match(promptHash(buildPlannerPrompt(facts)), /^[0-9a-f]{64}$/);
  });

  it('hashes changed facts or history differently', () => {
    const base = promptHash(buildPlannerPrompt(facts));
    assert.notEqual(
      base,
      promptHash(
        buildPlannerPrompt({ ...facts, facts: { ...facts.facts, order: { id: 'A-1842', amountCents: 4991 } } }),
      ),
    );
    assert.notEqual(
      base,
      promptHash(
        buildPlannerPrompt({
          ...facts,
          history: [{ key: 'reserve:v1:acme:renewal-2026-08-28-01', operation: 'reserve', status: 'confirmed' }],
        }),
      ),
    );
  });
});
