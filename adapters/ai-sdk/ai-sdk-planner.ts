import type { PlanOptions, Planner, PlannerOutput } from '../../activities/planners/planner';
import { httpFailure, type OpenAiPlannerConfig } from '../../activities/planners/openai-compatible-planner';
import { RetrysafeError } from '../../policies/errors';
import { buildPlannerPrompt, type PlannerFacts, type ToolSchema } from '../../policies/planner-contract';

/**
 * A planner built on the Vercel AI SDK (`ai` 7 with `@ai-sdk/openai-compatible`): the registered tools become AI
 * SDK tools without `execute`, so the model proposes and retrysafe acts. It runs inside the planner activity like
 * any planner, so its answer is recorded in history and a resumed run reuses it instead of asking again.
 *
 * `ai` is ESM only, so it is loaded with `import()` on first use; it runs on Node 20 although it declares Node 22.
 * The AI SDK's own retries are off (`maxRetries: 0`): the planner activity's retry policy is the one that counts.
 */
export class AiSdkPlanner implements Planner {
  readonly modelId: string;
  readonly #config: OpenAiPlannerConfig;

  constructor(config: OpenAiPlannerConfig) {
    this.#config = config;
    this.modelId = config.model;
  }

  /**
   * Asks the model for the next step over the run's facts and tools; the answer is recorded by the caller, never
   * regenerated on replay.
   */
  async plan(input: PlannerFacts, tools: ToolSchema[], options: PlanOptions = {}): Promise<PlannerOutput> {
    const { generateText, jsonSchema, APICallError, InvalidToolInputError, NoSuchToolError } = await import('ai');
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
    const prompt = options.prompt ?? buildPlannerPrompt(input);
    const provider = createOpenAICompatible({
      name: 'retrysafe-planner',
      baseURL: this.#config.baseUrl,
      ...(this.#config.apiKey ? { apiKey: this.#config.apiKey } : {}),
    });
    const where = `planner ${this.#config.model} at ${new URL(this.#config.baseUrl).host} (AI SDK)`;
    const signals = [AbortSignal.timeout(this.#config.timeoutMs), ...(options.signal ? [options.signal] : [])];
    try {
      const result = await generateText({
        model: provider(this.#config.model),
        system: prompt.system,
        prompt: prompt.user,
        tools: Object.fromEntries(
          tools.map((t) => [
            t.function.name,
            { description: t.function.description, inputSchema: jsonSchema(t.function.parameters as never) },
          ]),
        ),
        toolChoice: this.#config.toolChoice,
        temperature: 0,
        maxRetries: 0,
        abortSignal: AbortSignal.any(signals),
      });
      const call = result.toolCalls[0];
      return {
        rawOutput: JSON.stringify({
          text: result.text,
          toolCalls: result.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input })),
        }),
        ...(call ? { toolName: call.toolName, arguments: JSON.stringify(call.input) } : {}),
        ...(result.text ? { text: result.text } : {}),
        usage: { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 },
      };
    } catch (err) {
      // A proposal that fits no tool is an answer to record (the activity refuses it), not a transport failure.
      if (InvalidToolInputError.isInstance(err) || NoSuchToolError.isInstance(err)) {
        return {
          rawOutput: err.message,
          toolName: err.toolName,
          ...(InvalidToolInputError.isInstance(err) ? { arguments: err.toolInput } : {}),
          usage: { inputTokens: 0, outputTokens: 0 },
        };
      }
      if (APICallError.isInstance(err) && err.statusCode !== undefined) {
        throw httpFailure(where, err.statusCode, err.responseBody ?? err.message);
      }
      // A refused connection, a reset, a timeout: retried by the activity.
      throw new RetrysafeError('TransientProviderError', `${where}: ${(err as Error).message}`, {
        provider: 'planner',
      });
    }
  }
}
