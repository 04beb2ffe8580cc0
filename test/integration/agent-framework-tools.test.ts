import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { exampleRegistry } from '../../examples/tools';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { assertOneChargeAcrossCrash } from '../support/agent-adapter-case';
import { start as startFakeModel, type FakeOpenAiServer } from '../support/fake-openai-server';
import { retrysafeTool, type ActionResult, type RefusalResult } from 'retrysafe/ai-sdk';
import { retrysafeAgentTool } from 'retrysafe/openai-agents';

/**
 * Agents built with the Vercel AI SDK (`generateText`) and the OpenAI Agents SDK (`run`), against an
 * OpenAI-compatible model served by the fake server, whose charge tool is retrysafe's adapter for each. The worker
 * running the charge is SIGKILLed after the payments provider commits; the model then calls the tool again in a new
 * turn, with a new tool-call ID. Charges are counted at the provider.
 */
const registry = exampleRegistry();
// The Agents SDK would export traces to OpenAI; this machine reaches no such service, and a test must not try.
setTracingDisabled(true);

describe('agent framework tool adapters (a worker SIGKILLed after the provider commits)', () => {
  let stack: Stack;
  let model: FakeOpenAiServer;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments'] });
    model = await startFakeModel();
  });
  after(async () => {
    await model?.close();
    await stack?.stop();
  });

  it('Vercel AI SDK (generateText): the tool called again for the same event returns the first outcome; one charge', async () => {
    await assertOneChargeAcrossCrash(stack, 'ai-sdk', async (eventId, args) => {
      const { generateText, stepCountIs } = await import('ai');
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      model.script([{ toolCall: { name: 'charge', arguments: args } }, { content: 'The charge is handled.' }]);
      const provider = createOpenAICompatible({ name: 'fake', baseURL: model.url, apiKey: 'test-key' });
      const result = await generateText({
        model: provider('fake-model'),
        prompt: `Renew the subscription for ${eventId}.`,
        tools: { charge: retrysafeTool('charge', { retrysafe: stack.retrysafe, registry, tenant: 'acme', eventId }) },
        stopWhen: stepCountIs(3),
      });
      assert.equal(result.text, 'The charge is handled.');
      const toolResults = result.steps.flatMap((s) => s.toolResults);
      assert.equal(toolResults.length, 1, 'one tool call');
      const output = toolResults[0].output as ActionResult & RefusalResult;
      assert.ok(
        JSON.stringify(model.lastRequest()?.body).includes(output.key ?? output.error?.code),
        'the model saw it',
      );
      return output;
    });
  });

  it('OpenAI Agents SDK (run): the tool called again for the same event returns the first outcome; one charge', async () => {
    await assertOneChargeAcrossCrash(stack, 'openai-agents', async (eventId, args) => {
      model.script([{ toolCall: { name: 'charge', arguments: args } }, { content: 'The charge is handled.' }]);
      const agent = new Agent({
        name: 'renewals',
        instructions: 'Renew subscriptions.',
        model: new OpenAIChatCompletionsModel(new OpenAI({ baseURL: model.url, apiKey: 'test-key' }), 'fake-model'),
        tools: [retrysafeAgentTool('charge', { retrysafe: stack.retrysafe, registry, tenant: 'acme', eventId })],
      });
      const result = await run(agent, `Renew the subscription for ${eventId}.`);
      assert.equal(result.finalOutput, 'The charge is handled.');
      const outputs = result.newItems.filter((i) => i.type === 'tool_call_output_item');
      assert.equal(outputs.length, 1, 'one tool call');
      const output = (outputs[0] as { output: unknown }).output;
      return JSON.parse(typeof output === 'string' ? output : JSON.stringify(output)) as ActionResult & RefusalResult;
    });
  });
});
