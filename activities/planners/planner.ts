import type { PlannerFacts, PlannerPrompt, ToolSchema } from '../../policies/planner-contract';

/** Tokens a call consumed, as the model reported them (0 when it reports nothing). */
export interface PlannerUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What a planner answered, uninterpreted: the activity parses and records it. */
export interface PlannerOutput {
  /** The answer as received (the assistant message, or the script step), recorded for audit. */
  rawOutput: string;
  toolName?: string;
  /** The tool call's arguments as the JSON text the model wrote. */
  arguments?: string;
  text?: string;
  usage: PlannerUsage;
}

/** What the plan activity passes a planner beside the facts and tools. */
export interface PlanOptions {
  /** The prompt the activity hashed; planners that talk to a model send exactly this. */
  prompt?: PlannerPrompt;
  signal?: AbortSignal;
}

/**
 * A source of proposals: a model behind an API, or a script. It only proposes; it never acts, holds no
 * signing key, and its output is validated before anything uses it. Transport failures are thrown
 * (retryable unless typed otherwise); output that does not fit the tools is returned, not thrown.
 */
export interface Planner {
  readonly modelId: string;
  /**
   * The next step for these facts: an intent for one of the tools, stop, or ask a human. Called from an activity only.
   */
  plan(input: PlannerFacts, tools: ToolSchema[], options?: PlanOptions): Promise<PlannerOutput>;
}
