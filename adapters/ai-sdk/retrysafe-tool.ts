import type { Tool } from 'ai';
import type { ActionResult, RefusalResult } from '../action-result';
import { claimForAgent, type AgentToolOptions } from '../agent-claim';

/**
 * A registered retrysafe tool as a Vercel AI SDK tool, for an agent that runs outside Temporal. The agent's code
 * binds the business event it works on; the model supplies only the tool's input. Its `execute` claims the action
 * keyed by tenant, event and step (`charge:v1:acme:<event>`) and answers with the action's state, so the model
 * calling the tool again for this event (a new turn, a new tool-call ID, a retried generation) gets the first
 * outcome, never a second effect. `unknown`, `needs_review` and `awaiting_confirmation` come back as results the
 * model reads, never as exceptions that invite a retry; a refusal (a changed request, invalid input) is a result
 * with `error`. Types only are imported from `ai`: the AI SDK itself is the application's dependency.
 */
export type RetrysafeToolOptions = AgentToolOptions;

/** The registered tool `name` as an AI SDK tool whose calls claim keyed actions (see {@link RetrysafeToolOptions}). */
export function retrysafeTool(name: string, opts: RetrysafeToolOptions): Tool<unknown, ActionResult | RefusalResult> {
  const tool = opts.registry.get(name);
  return {
    description: tool.description,
    // The registry's own schema: the AI SDK shows it to the model and checks the call; retrysafe parses it again.
    inputSchema: tool.input,
    execute: (input: unknown) => claimForAgent('ai-sdk', opts, name, input),
  } as Tool<unknown, ActionResult | RefusalResult>;
}
