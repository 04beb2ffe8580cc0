import { z } from 'zod';
import { invalidConfigError, RetrysafeError } from '../../policies/errors';
import { PLANNER_REQUEST_TIMEOUT_MS, buildPlannerPrompt } from '../../policies/planner-contract';
import type { PlannerFacts, ToolSchema } from '../../policies/planner-contract';
import type { PlanOptions, Planner, PlannerOutput } from './planner';
import { firstIssue } from '../../policies/zod-issues';

/**
 * A planner behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, a
 * gateway). One request per call, temperature 0, tools offered as functions:
 *
 *   POST {baseUrl}/chat/completions ─▶ 2xx: first tool call (or text) + usage, uninterpreted
 *                                    ─▶ 429 / 5xx / reset / timeout / unreadable body: TransientProviderError (retried)
 *                                    ─▶ 401 / 403: AuthorizationRejected;  other 4xx: ProviderValidationRejected
 *
 * The API key is sent only in the Authorization header; it is kept in a private field and appears in no
 * message, so neither logs nor failure details can leak it.
 */
export interface OpenAiPlannerConfig {
  /** The API root, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** `required` forces a tool call; `auto` suits servers that do not support `required`. */
  toolChoice: 'required' | 'auto';
  timeoutMs: number;
}

/** A planner setting is missing or invalid; the message names the variable. A worker exits 2 on it. */
export const PlannerConfigError = invalidConfigError('PlannerConfigError');

export const OpenAiPlannerEnv = z.object({
  RETRYSAFE_PLANNER_URL: z.url({
    protocol: /^https?$/,
    error: 'RETRYSAFE_PLANNER_URL must be the http(s) root of an OpenAI-compatible API, e.g. https://api.openai.com/v1',
  }),
  RETRYSAFE_PLANNER_MODEL: z
    .string({ error: 'RETRYSAFE_PLANNER_MODEL must name the model, e.g. gpt-4o-mini' })
    .trim()
    .min(1, 'RETRYSAFE_PLANNER_MODEL must name the model, e.g. gpt-4o-mini'),
  // Optional: local servers (Ollama, vLLM) usually need none. Its value never appears in a message.
  RETRYSAFE_PLANNER_API_KEY: z.string({ error: 'RETRYSAFE_PLANNER_API_KEY must be a string' }).optional(),
  RETRYSAFE_PLANNER_TOOL_CHOICE: z
    .enum(['required', 'auto'], { error: 'RETRYSAFE_PLANNER_TOOL_CHOICE must be "required" or "auto"' })
    .default('required'),
  RETRYSAFE_PLANNER_TIMEOUT_MS: z.coerce
    .number({ error: 'RETRYSAFE_PLANNER_TIMEOUT_MS must be a number of milliseconds' })
    .int('RETRYSAFE_PLANNER_TIMEOUT_MS must be a whole number of milliseconds')
    .positive('RETRYSAFE_PLANNER_TIMEOUT_MS must be positive')
    .default(PLANNER_REQUEST_TIMEOUT_MS),
});

/** Reads the OpenAI-compatible planner's settings from the environment; call at entry points only. */
export function parseOpenAiPlannerEnv(env: Record<string, string | undefined>): OpenAiPlannerConfig {
  const parsed = OpenAiPlannerEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new PlannerConfigError(`invalid planner configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    baseUrl: e.RETRYSAFE_PLANNER_URL,
    model: e.RETRYSAFE_PLANNER_MODEL,
    ...(e.RETRYSAFE_PLANNER_API_KEY ? { apiKey: e.RETRYSAFE_PLANNER_API_KEY } : {}),
    toolChoice: e.RETRYSAFE_PLANNER_TOOL_CHOICE,
    timeoutMs: e.RETRYSAFE_PLANNER_TIMEOUT_MS,
  };
}

/** The part of a chat completion the planner reads; everything else is ignored. */
const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(z.object({ function: z.object({ name: z.string(), arguments: z.string().nullish() }) }))
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .partial()
    .nullish(),
});

const MAX_ERROR_DETAIL = 300;

export class OpenAiCompatiblePlanner implements Planner {
  readonly modelId: string;
  readonly #config: Omit<OpenAiPlannerConfig, 'apiKey'>;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(config: OpenAiPlannerConfig, deps: { fetch?: typeof fetch } = {}) {
    const { apiKey, ...rest } = config;
    this.#config = rest;
    this.#apiKey = apiKey;
    this.#fetch = deps.fetch ?? fetch;
    this.modelId = config.model;
  }

  /**
   * Asks the model (one chat completion with the tools as functions) for the next step; its answer is validated by the
   * caller.
   */
  async plan(input: PlannerFacts, tools: ToolSchema[], options: PlanOptions = {}): Promise<PlannerOutput> {
    const prompt = options.prompt ?? buildPlannerPrompt(input);
    const url = `${this.#config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    const body = {
      model: this.#config.model,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      tools,
      tool_choice: this.#config.toolChoice,
      temperature: 0,
    };
    const signals = [AbortSignal.timeout(this.#config.timeoutMs), ...(options.signal ? [options.signal] : [])];
    const where = `planner ${this.#config.model} at ${new URL(url).host}`;
    const { status, text } = await this.#post(where, url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
    if (status < 200 || status > 299) throw httpFailure(where, status, text);
    const { json, completion } = chatCompletionIn(where, status, text);
    const message = completion.choices[0].message;
    const call = message.tool_calls?.[0]?.function;
    const content = message.content?.trim() ? message.content : undefined;
    const usage = completion.usage ?? {};
    return {
      rawOutput: JSON.stringify((json as { choices: Array<{ message: unknown }> }).choices[0].message),
      ...(call ? { toolName: call.name } : {}),
      ...(call?.arguments != null ? { arguments: call.arguments } : {}),
      ...(content ? { text: content } : {}),
      usage: { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 },
    };
  }

  /** One request; a failure to get any answer at all is transient. */
  async #post(where: string, url: string, init: RequestInit): Promise<{ status: number; text: string }> {
    try {
      const res = await this.#fetch(url, init);
      return { status: res.status, text: await res.text() };
    } catch (err) {
      throw new RetrysafeError('TransientProviderError', `${where}: request failed: ${describeFetchError(err)}`, {
        provider: 'planner',
      });
    }
  }
}

/** The chat completion in a 2xx body; a body that is not one is a broken gateway or a cut body, not the model's. */
function chatCompletionIn(where: string, status: number, text: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const details = { provider: 'planner', status };
    throw new RetrysafeError(
      'TransientProviderError',
      `${where}: answered ${status} with a body that is not JSON`,
      details,
    );
  }
  const parsed = ChatCompletion.safeParse(json);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw new RetrysafeError(
      'TransientProviderError',
      `${where}: answered ${status} with no chat completion (${issue.field}: ${issue.message})`,
      { provider: 'planner', status },
    );
  }
  return { json, completion: parsed.data };
}

export function httpFailure(where: string, status: number, text: string): RetrysafeError {
  const detail = errorDetail(text);
  const message = `${where}: answered HTTP ${status}${detail ? `: ${detail}` : ''}`;
  const details = { provider: 'planner', status };
  if (status === 429 || status >= 500) return new RetrysafeError('TransientProviderError', message, details);
  if (status === 401 || status === 403) {
    return new RetrysafeError('AuthorizationRejected', `${message} (check RETRYSAFE_PLANNER_API_KEY)`, details);
  }
  return new RetrysafeError('ProviderValidationRejected', message, details);
}

/** The provider's own error message, shortened; the request (and so the key) is never echoed. */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof body.error === 'string') detail = body.error;
    else if (typeof body.error?.message === 'string') detail = body.error.message;
  } catch {
    // not JSON: keep the text
  }
  return detail.replace(/\s+/g, ' ').trim().slice(0, MAX_ERROR_DETAIL);
}

function describeFetchError(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  if (e.name === 'AbortError') return 'aborted';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
