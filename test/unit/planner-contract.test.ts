import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { exampleRegistry, exampleTools } from '../../examples/tools';
import { ChargeInput } from '../../examples/tools/schemas';
import { RetrysafeError } from '../../policies/errors';
import type { ErrorCode } from '../../policies/errors';
import type { AnyTool } from '../../policies/tool';
import { createToolRegistry } from '../../policies/tool-registry';
import {
  ASK_HUMAN_TOOL,
  STOP_TOOL,
  buildPlannerPrompt,
  interpretPlannerOutput,
  parsePlannerOutput,
  promptHash,
  toolSchemaVersion,
  toolSchemas,
} from '../../policies/planner-contract';
import type { PlannerFacts, PlannerOutputParts, ToolSchema } from '../../policies/planner-contract';

const registry = exampleRegistry();
const UNUSED = 'http://127.0.0.1:9';
const URLS = { payments: UNUSED, email: UNUSED, tickets: UNUSED, inventory: UNUSED, shipping: UNUSED };
const SEVEN = ['charge', 'refund', 'send-email', 'create-ticket', 'reserve', 'release', 'create-shipment'];

/** The example registry with the charge tool changed by `change`. */
function withCharge(change: (charge: AnyTool) => AnyTool) {
  return createToolRegistry(exampleTools(URLS).map((t) => (t.name === 'charge' ? change(t) : t)));
}

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
    () => parsePlannerOutput(raw, registry),
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

describe("tool schemas derived from the registry's zod inputs", () => {
  const tools = toolSchemas(registry);

  it('offers one function tool per registered tool, in registration order, plus stop and ask_human', () => {
    assert.deepEqual(
      tools.map((t) => t.function.name),
      [...SEVEN, STOP_TOOL, ASK_HUMAN_TOOL],
    );
    assert.deepEqual(registry.names, SEVEN);
    for (const t of tools) {
      assert.equal(t.type, 'function');
      assert.ok(t.function.description.length > 0, `${t.function.name} has a description`);
      assert.equal(t.function.parameters.type, 'object');
      assert.equal(t.function.parameters.$schema, undefined, 'no $schema inside a tool');
    }
  });

  it("describes each tool with the tool's own description", () => {
    for (const name of SEVEN) assert.equal(tool(tools, name).description, registry.get(name).description);
    assert.match(tool(tools, 'charge').description, /minor units/);
  });

  it('offers only the tools of the registry it is given', () => {
    const [charge, refund] = exampleTools(URLS);
    const payments = toolSchemas(createToolRegistry([charge, refund]));
    assert.deepEqual(
      payments.map((t) => t.function.name),
      ['charge', 'refund', STOP_TOOL, ASK_HUMAN_TOOL],
    );
    assert.deepEqual(
      toolSchemas(createToolRegistry([])).map((t) => t.function.name),
      [STOP_TOOL, ASK_HUMAN_TOOL],
    );
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

  it('has a schema version that is stable across calls and registries of the same tools', () => {
    const version = toolSchemaVersion(tools);
    assert.match(version, /^[0-9a-f]{12}$/);
    assert.equal(toolSchemaVersion(toolSchemas(registry)), version);
    assert.equal(toolSchemaVersion(toolSchemas(exampleRegistry())), version);
  });

  it('changes the schema version when an input schema, a description or the tool set changes', () => {
    const version = toolSchemaVersion(tools);
    const withNote = withCharge((t) => ({ ...t, input: ChargeInput.extend({ note: z.string().optional() }) }));
    assert.notEqual(toolSchemaVersion(toolSchemas(withNote)), version);
    const tighter = withCharge((t) => ({
      ...t,
      input: ChargeInput.extend({ amountCents: z.number().int().positive().max(500) }),
    }));
    assert.notEqual(toolSchemaVersion(toolSchemas(tighter)), version);
    const reworded = withCharge((t) => ({ ...t, description: 'Charge a card.' }));
    assert.notEqual(toolSchemaVersion(toolSchemas(reworded)), version);
    const [charge, refund] = exampleTools(URLS);
    assert.notEqual(toolSchemaVersion(toolSchemas(createToolRegistry([charge, refund]))), version);
  });
});

describe('parsePlannerOutput', () => {
  it('turns a valid tool call into a normalized act decision with the text as rationale', () => {
    const decision = parsePlannerOutput(
      {
        toolName: 'charge',
        arguments: JSON.stringify({ ...CHARGE_ARGS, currency: ' USD ', description: '  Annual renewal ' }),
        text: 'The renewal is due; charging the card on file.',
      },
      registry,
    );
    assert.deepEqual(decision, {
      kind: 'act',
      intent: { operation: 'charge', ...CHARGE_ARGS, description: 'Annual renewal' },
      rationale: 'The renewal is due; charging the card on file.',
    });
  });

  it('accepts an operation field that agrees with the tool name', () => {
    const decision = parsePlannerOutput(
      { toolName: 'charge', arguments: JSON.stringify({ operation: 'charge', ...CHARGE_ARGS }) },
      registry,
    );
    assert.equal(decision.kind, 'act');
  });

  it('reads stop and ask_human as their own decisions, never as actions', () => {
    assert.deepEqual(parsePlannerOutput({ toolName: 'stop', arguments: '{"reason":" done "}' }, registry), {
      kind: 'stop',
      reason: 'done',
    });
    assert.deepEqual(
      parsePlannerOutput({ toolName: 'ask_human', arguments: '{"question":"Which address?"}' }, registry),
      {
        kind: 'ask-human',
        question: 'Which address?',
      },
    );
  });

  it('refuses a float amount, naming the field', () => {
    const err = assertInvalid(
      { toolName: 'charge', arguments: JSON.stringify({ ...CHARGE_ARGS, amountCents: 49.9 }) },
      'InvalidIntent',
      'amountCents',
    );
    assert.match(err.message, /integer/);
  });

  it('refuses an unknown tool, listing the tools the planner may call', () => {
    const err = assertInvalid({ toolName: 'wire_transfer', arguments: '{}' }, 'UnknownOperation', 'toolName');
    assert.match(err.message, /charge, refund, .*create-shipment, stop, ask_human/);
  });

  it('refuses a tool that exists elsewhere but is not in the registry it is given', () => {
    const [charge, refund] = exampleTools(URLS);
    const payments = createToolRegistry([charge, refund]);
    assert.throws(
      () =>
        parsePlannerOutput(
          { toolName: 'send-email', arguments: JSON.stringify({ to: 'a@example.com', subject: 's', body: 'b' }) },
          payments,
        ),
      (err: unknown) =>
        err instanceof RetrysafeError && err.code === 'UnknownOperation' && err.details.field === 'toolName',
    );
    assert.equal(
      parsePlannerOutput({ toolName: 'charge', arguments: JSON.stringify(CHARGE_ARGS) }, payments).kind,
      'act',
    );
  });

  it('refuses arguments too large for history, naming the largest field', () => {
    const args = { to: 'alice@example.com', subject: 'Receipt', body: 'x'.repeat(40_000) };
    assertInvalid({ toolName: 'send-email', arguments: JSON.stringify(args) }, 'PayloadTooLarge', 'body');
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
    const extra = assertInvalid(
      { toolName: 'charge', arguments: JSON.stringify({ ...CHARGE_ARGS, tip: 100 }) },
      'InvalidIntent',
      'tip',
    );
    assert.match(extra.message, /tip: unknown field/);
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
      registry,
    );
    assert.equal(decision.kind, 'invalid');
    assert.ok(decision.kind === 'invalid');
    assert.equal(decision.error.field, 'amountCents');
    assert.equal(decision.error.code, 'InvalidIntent');
    assert.equal(decision.rawOutput, raw);
    const tooLarge = interpretPlannerOutput(
      {
        toolName: 'send-email',
        arguments: JSON.stringify({ to: 'a@example.com', subject: 's', body: 'x'.repeat(40_000) }),
      },
      raw,
      registry,
    );
    assert.ok(tooLarge.kind === 'invalid');
    assert.deepEqual([tooLarge.error.code, tooLarge.error.field], ['PayloadTooLarge', 'body']);
    const unknownTool = interpretPlannerOutput({ toolName: 'wire_transfer', arguments: '{}' }, raw, registry);
    assert.ok(unknownTool.kind === 'invalid');
    assert.deepEqual([unknownTool.error.code, unknownTool.error.field], ['UnknownOperation', 'toolName']);
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
