import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { RetrysafeError } from '../../policies/errors';
import type { ErrorCode } from '../../policies/errors';
import { buildPlannerPrompt, promptHash, toolSchemaVersion, toolSchemas } from '../../policies/planner-contract';
import type { PlannerFacts, PlannerHistoryEntry, RecordedDecision, ToolSchema } from '../../policies/planner-contract';
import { createToolRegistry, type ToolRegistry } from '../../policies/tool-registry';
import {
  OpenAiCompatiblePlanner,
  SCRIPT_EXHAUSTED,
  ScriptedPlanner,
  createPlanActivity,
  parseOpenAiPlannerEnv,
} from '../../activities/planners';
import type { OpenAiPlannerConfig, Planner, PlannerOutput } from '../../activities/planners';
import { exampleRegistry, exampleTools } from '../../examples/tools';
import { plannerFromEnv } from '../../examples/planners/from-env';
import { RENEWAL_PLANNER_MODEL_ID } from '../../examples/planners/renewal-script';
import { start } from '../support/fake-openai-server';
import type { FakeOpenAiServer } from '../support/fake-openai-server';

const API_KEY = 'sk-test-never-print-me';
const tools = exampleRegistry();
const SCHEMAS = toolSchemas(tools);

const CHARGE_ARGS = {
  amountCents: 4990,
  currency: 'usd',
  customerId: 'cus_1842',
  paymentMethod: 'pm_card_visa',
  merchantReference: 'A-1842',
};

const ORDER = {
  id: 'A-1842',
  amountCents: 4990,
  currency: 'USD',
  customerId: 'cus_1842',
  paymentMethod: 'pm_card_visa',
  sku: 'SKU-PLAN-PRO',
  quantity: 1,
  address: { line1: '1 Main St', city: 'Oslo', postalCode: '0150', country: 'no' },
};

function renewalFacts(history: PlannerHistoryEntry[] = [], order: Record<string, unknown> = ORDER): PlannerFacts {
  return { tenant: 'acme', eventId: 'renewal-2026-08-28-01', goal: 'Renew order A-1842', facts: { order }, history };
}

const confirmed = (operation: PlannerHistoryEntry['operation']): PlannerHistoryEntry => ({
  key: `${operation}:v1:acme:renewal-2026-08-28-01`,
  operation,
  status: 'confirmed',
  providerRef: `${operation}_1`,
});

/** Captures activity log lines so tests can assert on what was (not) logged, and keeps output quiet. */
class CaptureLogger implements Logger {
  readonly lines: string[] = [];
  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.lines.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
  }
  trace = (m: string, meta?: LogMetadata) => this.log('TRACE', m, meta);
  debug = (m: string, meta?: LogMetadata) => this.log('DEBUG', m, meta);
  info = (m: string, meta?: LogMetadata) => this.log('INFO', m, meta);
  warn = (m: string, meta?: LogMetadata) => this.log('WARN', m, meta);
  error = (m: string, meta?: LogMetadata) => this.log('ERROR', m, meta);
}

async function runPlan(
  planner: Planner,
  facts: PlannerFacts,
  logger = new CaptureLogger(),
  registry: ToolRegistry = tools,
): Promise<RecordedDecision> {
  const env = new MockActivityEnvironment(
    { activityId: '7', attempt: 1, workflowExecution: { workflowId: 'run:acme:renewal-2026-08-28-01', runId: 'r1' } },
    { logger },
  );
  let t = 1_000;
  return env.run(createPlanActivity({ planner, tools: registry, now: () => (t += 25) }), facts);
}

async function assertRejects(promise: Promise<unknown>, code: ErrorCode, retryable: boolean): Promise<RetrysafeError> {
  let caught: RetrysafeError | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.retryable, retryable);
    caught = err;
    return true;
  });
  return caught!;
}

async function assertFailure(
  promise: Promise<unknown>,
  type: string,
  nonRetryable: boolean,
): Promise<ApplicationFailure> {
  let caught: ApplicationFailure | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(err)}`);
    assert.equal(err.type, type);
    assert.equal(err.nonRetryable, nonRetryable);
    caught = err;
    return true;
  });
  return caught!;
}

describe('scripted planner', () => {
  it('answers its script in order and throws a non-retryable failure when the script runs out', async () => {
    const planner = new ScriptedPlanner([
      { kind: 'tool', name: 'charge', arguments: CHARGE_ARGS },
      { kind: 'stop', reason: 'charged' },
    ]);
    const first = await runPlan(planner, renewalFacts());
    assert.equal(first.decision.kind, 'act');
    assert.equal((await runPlan(planner, renewalFacts())).decision.kind, 'stop');
    const failure = await assertFailure(runPlan(planner, renewalFacts()), SCRIPT_EXHAUSTED, true);
    assert.match(failure.message, /step 3 .*script \(2 steps\)/);
    assert.equal(planner.calls, 3);
  });

  it('emits scripted invalid output verbatim, so it is recorded as invalid', async () => {
    const planner = new ScriptedPlanner([{ kind: 'invalid', toolName: 'charge', arguments: '{"amountCents": 49.9}' }]);
    const recorded = await runPlan(planner, renewalFacts());
    assert.equal(recorded.decision.kind, 'invalid');
    assert.ok(recorded.decision.kind === 'invalid');
    assert.equal(recorded.decision.error.field, 'amountCents');
  });
});

/** A planner that records the tools it was offered and answers one fixed tool call. */
class RecordingPlanner implements Planner {
  readonly modelId = 'recording';
  offered: ToolSchema[][] = [];
  constructor(private readonly answer: { toolName: string; arguments: Record<string, unknown> }) {}
  async plan(_input: PlannerFacts, offered: ToolSchema[]): Promise<PlannerOutput> {
    this.offered.push(offered);
    const args = JSON.stringify(this.answer.arguments);
    return {
      rawOutput: JSON.stringify({ tool: this.answer.toolName, arguments: args }),
      toolName: this.answer.toolName,
      arguments: args,
      usage: { inputTokens: 0, outputTokens: 0 },
    };
  }
}

describe("plan activity over the worker's registry", () => {
  const UNUSED = 'http://127.0.0.1:9';
  const [charge, refund] = exampleTools({
    payments: UNUSED,
    email: UNUSED,
    tickets: UNUSED,
    inventory: UNUSED,
    shipping: UNUSED,
  });
  const payments = createToolRegistry([charge, refund]);

  it("offers the planner exactly the registry's tools and records that tool set's version", async () => {
    const planner = new RecordingPlanner({ toolName: 'charge', arguments: CHARGE_ARGS });
    const recorded = await runPlan(planner, renewalFacts(), undefined, payments);
    assert.deepEqual(
      planner.offered[0].map((t) => t.function.name),
      ['charge', 'refund', 'stop', 'ask_human'],
    );
    assert.deepEqual(planner.offered[0], toolSchemas(payments));
    assert.equal(recorded.toolSchemaVersion, toolSchemaVersion(toolSchemas(payments)));
    assert.notEqual(recorded.toolSchemaVersion, toolSchemaVersion(SCHEMAS));
    assert.deepEqual(recorded.decision, { kind: 'act', intent: { operation: 'charge', ...CHARGE_ARGS } });
  });

  it('masks a card number the model wrote before its decision is recorded', async () => {
    const planner = new RecordingPlanner({
      toolName: 'ask_human',
      arguments: { question: 'Charge card 4242 4242 4242 4242 again?' },
    });
    const recorded = await runPlan(planner, renewalFacts(), undefined, payments);
    assert.equal(recorded.decision.kind, 'ask-human');
    assert.ok(recorded.decision.kind === 'ask-human');
    assert.match(recorded.decision.question, /•••• 4242/);
    assert.doesNotMatch(JSON.stringify(recorded), /4242 4242 4242 4242|4242424242424242/);
  });

  it('records a proposal of a tool outside the registry as invalid, naming toolName', async () => {
    const planner = new RecordingPlanner({
      toolName: 'send-email',
      arguments: { to: 'alice@example.com', subject: 'Hi', body: 'Hello' },
    });
    const recorded = await runPlan(planner, renewalFacts(), undefined, payments);
    assert.ok(recorded.decision.kind === 'invalid');
    assert.equal(recorded.decision.error.code, 'UnknownOperation');
    assert.equal(recorded.decision.error.field, 'toolName');
    assert.equal((await runPlan(planner, renewalFacts())).decision.kind, 'act', 'the full registry has send-email');
  });
});

describe('renewal script', () => {
  it('proposes reserve, charge, create-shipment from the history, then stops', async () => {
    const planner = plannerFromEnv({});
    assert.equal(planner.modelId, RENEWAL_PLANNER_MODEL_ID);
    const steps: RecordedDecision['decision'][] = [];
    const history: PlannerHistoryEntry[] = [];
    for (;;) {
      const { decision } = await runPlan(planner, renewalFacts(history));
      steps.push(decision);
      if (decision.kind !== 'act') break;
      history.push(confirmed(decision.intent.operation));
    }
    assert.deepEqual(
      steps.map((d) => (d.kind === 'act' ? d.intent.operation : d.kind)),
      ['reserve', 'charge', 'create-shipment', 'stop'],
    );
    const charge = steps[1];
    assert.ok(charge.kind === 'act' && charge.intent.operation === 'charge');
    assert.equal(charge.intent.amountCents, 4990);
    assert.equal(charge.intent.currency, 'usd', 'normalized by the intent parser');
    const ship = steps[2];
    assert.ok(ship.kind === 'act' && ship.intent.operation === 'create-shipment');
    assert.equal((ship.intent.address as { country: string }).country, 'NO');
  });

  it('asks a human when an action is unknown and stops when one failed', async () => {
    const planner = plannerFromEnv({ RETRYSAFE_PLANNER: 'scripted' });
    const unknown = await runPlan(
      planner,
      renewalFacts([confirmed('reserve'), { ...confirmed('charge'), status: 'unknown' }]),
    );
    assert.equal(unknown.decision.kind, 'ask-human');
    const failed = await runPlan(
      planner,
      renewalFacts([confirmed('reserve'), { ...confirmed('charge'), status: 'failed' }]),
    );
    assert.equal(failed.decision.kind, 'stop');
  });

  it('throws when asked about history outside its script or without an order', async () => {
    const planner = plannerFromEnv({});
    await assertFailure(runPlan(planner, renewalFacts([confirmed('send-email')])), SCRIPT_EXHAUSTED, true);
    const noOrder = await assertFailure(runPlan(planner, renewalFacts([], { id: 'A-1' })), 'InvalidPlannerFacts', true);
    assert.match(noOrder.message, /facts\.order\.amountCents/);
  });

  it('records a float amount in the facts as an invalid decision, not an action', async () => {
    const recorded = await runPlan(
      plannerFromEnv({}),
      renewalFacts([confirmed('reserve')], { ...ORDER, amountCents: 49.9 }),
    );
    assert.equal(recorded.decision.kind, 'invalid');
    assert.ok(recorded.decision.kind === 'invalid');
    assert.equal(recorded.decision.error.field, 'amountCents');
  });
});

describe('OpenAI-compatible planner against a local chat-completions server', () => {
  let server: FakeOpenAiServer;
  let config: OpenAiPlannerConfig;
  before(async () => {
    server = await start();
    config = { baseUrl: server.url, model: 'gpt-test-mini', apiKey: API_KEY, toolChoice: 'required', timeoutMs: 2_000 };
  });
  after(() => server.close());

  it('sends the model, the prompt and the tools, and parses the tool call and usage', async () => {
    server.script([
      {
        toolCall: { name: 'charge', arguments: CHARGE_ARGS },
        content: 'Due today.',
        usage: { prompt_tokens: 321, completion_tokens: 45 },
      },
    ]);
    const before = server.calls();
    const out = await new OpenAiCompatiblePlanner(config).plan(renewalFacts(), SCHEMAS);
    assert.equal(server.calls(), before + 1);
    const req = server.lastRequest()!;
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.headers.authorization, `Bearer ${API_KEY}`);
    const body = req.body as {
      model: string;
      messages: Array<{ role: string; content: string }>;
      tools: unknown[];
      tool_choice: string;
      temperature: number;
    };
    assert.equal(body.model, 'gpt-test-mini');
    assert.equal(body.tool_choice, 'required');
    assert.equal(body.temperature, 0);
    assert.deepEqual(body.tools, SCHEMAS);
    const prompt = buildPlannerPrompt(renewalFacts());
    assert.deepEqual(body.messages, [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ]);
    assert.equal(out.toolName, 'charge');
    assert.deepEqual(JSON.parse(out.arguments!), CHARGE_ARGS);
    assert.equal(out.text, 'Due today.');
    assert.deepEqual(out.usage, { inputTokens: 321, outputTokens: 45 });
  });

  it('treats 500 and 429 as retryable', async () => {
    server.script([
      { status: 500, error: 'upstream overloaded' },
      { status: 429, error: 'rate limited' },
    ]);
    const planner = new OpenAiCompatiblePlanner(config);
    const err = await assertRejects(planner.plan(renewalFacts(), SCHEMAS), 'TransientProviderError', true);
    assert.match(err.message, /HTTP 500: upstream overloaded/);
    await assertRejects(planner.plan(renewalFacts(), SCHEMAS), 'TransientProviderError', true);
  });

  it('treats 400 as a non-retryable refusal and 401 as an authorization failure that never shows the key', async () => {
    server.script([
      { status: 400, error: 'tools[0].function.parameters is invalid' },
      { status: 401, error: 'Incorrect API key provided' },
    ]);
    const planner = new OpenAiCompatiblePlanner(config);
    await assertRejects(planner.plan(renewalFacts(), SCHEMAS), 'ProviderValidationRejected', false);
    const auth = await assertRejects(planner.plan(renewalFacts(), SCHEMAS), 'AuthorizationRejected', false);
    assert.match(auth.message, /RETRYSAFE_PLANNER_API_KEY/);
    assert.doesNotMatch(`${auth.message} ${JSON.stringify(auth.details)}`, new RegExp(API_KEY));
    assert.doesNotMatch(JSON.stringify(planner), new RegExp(API_KEY), 'the key is not an enumerable field');
  });

  it('treats a 200 that is not JSON, a dead server and a timeout as retryable transport trouble', async () => {
    server.script([{ rawBody: '{"choices": [' }, { delayMs: 500, then: { content: 'late' } }]);
    await assertRejects(
      new OpenAiCompatiblePlanner(config).plan(renewalFacts(), SCHEMAS),
      'TransientProviderError',
      true,
    );
    const slow = new OpenAiCompatiblePlanner({ ...config, timeoutMs: 100 });
    const timedOut = await assertRejects(slow.plan(renewalFacts(), SCHEMAS), 'TransientProviderError', true);
    assert.match(timedOut.message, /timed out/);
    const dead = new OpenAiCompatiblePlanner({ ...config, baseUrl: 'http://127.0.0.1:9/v1' });
    await assertRejects(dead.plan(renewalFacts(), SCHEMAS), 'TransientProviderError', true);
  });

  it('planNextAction records malformed tool arguments as an invalid decision', async () => {
    server.script([
      { toolCall: { name: 'charge', arguments: '{"amountCents": 4990, "currency": "usd"' } },
      { toolCall: { name: 'charge', arguments: { ...CHARGE_ARGS, amountCents: 49.9 } } },
      { toolCall: { name: 'delete_customer', arguments: {} } },
      { content: 'I think you should charge the customer.' },
    ]);
    const planner = new OpenAiCompatiblePlanner(config);
    const fields: string[] = [];
    for (let i = 0; i < 4; i++) {
      const recorded = await runPlan(planner, renewalFacts());
      assert.ok(recorded.decision.kind === 'invalid', `response ${i + 1} is recorded as invalid`);
      assert.equal(recorded.decision.rawOutput, recorded.rawOutput);
      fields.push(recorded.decision.error.field);
    }
    assert.deepEqual(fields, ['arguments', 'amountCents', 'toolName', 'toolName']);
  });

  it('planNextAction records model id, prompt hash, tool schema version, raw output, usage and call id', async () => {
    server.script([
      { toolCall: { name: 'charge', arguments: CHARGE_ARGS }, usage: { prompt_tokens: 900, completion_tokens: 30 } },
      { toolCall: { name: 'charge', arguments: CHARGE_ARGS } },
      { toolCall: { name: 'stop', arguments: { reason: 'charged' } } },
    ]);
    const logger = new CaptureLogger();
    const planner = new OpenAiCompatiblePlanner(config);
    const first = await runPlan(planner, renewalFacts(), logger);
    assert.deepEqual(first.decision, { kind: 'act', intent: { operation: 'charge', ...CHARGE_ARGS } });
    assert.equal(first.modelId, 'gpt-test-mini');
    assert.equal(first.promptHash, promptHash(buildPlannerPrompt(renewalFacts())));
    assert.equal(first.toolSchemaVersion, toolSchemaVersion(SCHEMAS));
    assert.deepEqual(first.usage, { inputTokens: 900, outputTokens: 30 });
    assert.equal(first.plannerCallId, 'plan/run:acme:renewal-2026-08-28-01/7/1');
    assert.equal(first.latencyMs, 25);
    const raw = JSON.parse(first.rawOutput) as { tool_calls: Array<{ function: { name: string } }> };
    assert.equal(raw.tool_calls[0].function.name, 'charge');

    const same = await runPlan(planner, renewalFacts());
    assert.equal(same.promptHash, first.promptHash, 'same facts, same prompt hash');
    const next = await runPlan(planner, renewalFacts([confirmed('charge')]));
    assert.notEqual(next.promptHash, first.promptHash, 'changed history, another prompt hash');
    assert.deepEqual(next.decision, { kind: 'stop', reason: 'charged' });

    assert.ok(logger.lines.some((l) => l.includes('planner decision')));
    assert.ok(
      logger.lines.every((l) => !l.includes(API_KEY)),
      'the API key is never logged',
    );
  });

  it('planNextAction turns transport errors into retryable failures and refusals into final ones', async () => {
    server.script([
      { status: 503, error: 'unavailable' },
      { status: 400, error: 'bad request' },
    ]);
    const planner = new OpenAiCompatiblePlanner(config);
    await assertFailure(runPlan(planner, renewalFacts()), 'TransientProviderError', false);
    await assertFailure(runPlan(planner, renewalFacts()), 'ProviderValidationRejected', true);
  });

  it('planNextAction refuses malformed facts before calling the planner', async () => {
    const planner = new ScriptedPlanner([]);
    const bad = {
      ...renewalFacts(),
      history: [{ key: 'k', operation: 'charge', status: 'done' }],
    } as unknown as PlannerFacts;
    const failure = await assertFailure(runPlan(planner, bad), 'InvalidPlannerFacts', true);
    assert.match(failure.message, /history\.0\.status/);
    assert.equal(planner.calls, 0);
  });
});

describe('planner configuration from the environment', () => {
  it('names the missing variables and never prints the key', () => {
    assert.throws(
      () => plannerFromEnv({ RETRYSAFE_PLANNER: 'openai', RETRYSAFE_PLANNER_API_KEY: API_KEY }),
      (err: Error) => {
        assert.match(err.message, /RETRYSAFE_PLANNER_URL/);
        assert.match(err.message, /RETRYSAFE_PLANNER_MODEL/);
        assert.doesNotMatch(err.message, new RegExp(API_KEY));
        return true;
      },
    );
    assert.throws(() => plannerFromEnv({ RETRYSAFE_PLANNER: 'gpt' }), /RETRYSAFE_PLANNER must be/);
    assert.throws(
      () => parseOpenAiPlannerEnv({ RETRYSAFE_PLANNER_URL: 'ftp://x', RETRYSAFE_PLANNER_MODEL: 'm' }),
      /RETRYSAFE_PLANNER_URL/,
    );
  });

  it('builds the OpenAI-compatible planner with defaults', () => {
    const env = { RETRYSAFE_PLANNER_URL: 'http://127.0.0.1:11434/v1', RETRYSAFE_PLANNER_MODEL: 'llama3.1' };
    assert.deepEqual(parseOpenAiPlannerEnv(env), {
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3.1',
      toolChoice: 'required',
      timeoutMs: 30_000,
    });
    const planner = plannerFromEnv({ ...env, RETRYSAFE_PLANNER: 'openai' });
    assert.ok(planner instanceof OpenAiCompatiblePlanner);
    assert.equal(planner.modelId, 'llama3.1');
  });
});
