import { ApplicationFailure } from '@temporalio/activity';
import { ASK_HUMAN_TOOL, STOP_TOOL } from '../../policies/planner-contract';
import type { PlannerFacts } from '../../policies/planner-contract';
import type { Planner, PlannerOutput } from './planner';

/** One scripted answer. `invalid` is emitted verbatim, so tests can feed output that breaks the schema. */
export type ScriptStep =
  | { kind: 'tool'; name: string; arguments: Record<string, unknown>; text?: string }
  | { kind: 'stop'; reason: string }
  | { kind: 'ask-human'; question: string }
  | { kind: 'invalid'; toolName?: string; arguments?: string; text?: string };

/**
 * A fixed list of answers, one per call, or a function of the facts (and the call number) that returns
 * `undefined` where its script ends.
 */
export type Script = readonly ScriptStep[] | ((facts: PlannerFacts, call: number) => ScriptStep | undefined);

/** The failure type a scripted planner throws when asked for more than its script holds. Never retried. */
export const SCRIPT_EXHAUSTED = 'PlannerScriptExhausted';

/**
 * A deterministic planner for tests and demos. Asked past the end of its script it throws instead of
 * improvising, so a run that asks once too often fails loudly rather than acting on an invented step.
 */
export class ScriptedPlanner implements Planner {
  readonly modelId: string;
  #calls = 0;

  constructor(
    private readonly script: Script,
    options: { modelId?: string } = {},
  ) {
    this.modelId = options.modelId ?? 'scripted';
  }

  /** How many times `plan` was called, including the call that found the script exhausted. */
  get calls(): number {
    return this.#calls;
  }

  /** The script's next step (or the function's answer for this call); `SCRIPT_EXHAUSTED` once it has none left. */
  async plan(input: PlannerFacts): Promise<PlannerOutput> {
    const call = this.#calls++;
    const step = typeof this.script === 'function' ? this.script(input, call) : this.script[call];
    if (!step) {
      const length =
        typeof this.script === 'function' ? 'the script function' : `the script (${this.script.length} steps)`;
      throw ApplicationFailure.create({
        type: SCRIPT_EXHAUSTED,
        message: `${this.modelId} was asked for step ${call + 1} of ${input.tenant}/${input.eventId}, beyond ${length}; the run should have stopped, or the script needs another step`,
        nonRetryable: true,
      });
    }
    return outputOf(step);
  }
}

function outputOf(step: ScriptStep): PlannerOutput {
  const usage = { inputTokens: 0, outputTokens: 0 };
  switch (step.kind) {
    case 'tool':
      return toolCall(step.name, JSON.stringify(step.arguments), step.text);
    case 'stop':
      return toolCall(STOP_TOOL, JSON.stringify({ reason: step.reason }));
    case 'ask-human':
      return toolCall(ASK_HUMAN_TOOL, JSON.stringify({ question: step.question }));
    case 'invalid':
      return {
        rawOutput: JSON.stringify({ tool: step.toolName, arguments: step.arguments, text: step.text }),
        ...(step.toolName !== undefined ? { toolName: step.toolName } : {}),
        ...(step.arguments !== undefined ? { arguments: step.arguments } : {}),
        ...(step.text !== undefined ? { text: step.text } : {}),
        usage,
      };
  }

  function toolCall(name: string, args: string, text?: string): PlannerOutput {
    return {
      rawOutput: JSON.stringify({ tool: name, arguments: args, ...(text ? { text } : {}) }),
      toolName: name,
      arguments: args,
      ...(text ? { text } : {}),
      usage,
    };
  }
}
