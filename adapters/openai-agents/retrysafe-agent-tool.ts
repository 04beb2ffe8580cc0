import { tool, type FunctionTool } from '@openai/agents';
import { toolSchemas } from '../../policies/planner-contract';
import { claimForAgent, type AgentToolOptions } from '../agent-claim';

/**
 * A registered retrysafe tool as an OpenAI Agents SDK function tool, for an agent that runs outside Temporal. As
 * with the AI SDK adapter, the agent's code binds the business event and the model supplies the input; `execute`
 * claims the action keyed by tenant, event and step and answers with its state as JSON, so a repeated call for
 * the event (a model that mints a new tool-call ID every turn) gets the first outcome.
 *
 * Approval is retrysafe's, not the SDK's: `needsApproval` is off, because an SDK interruption is approved by
 * whatever code runs the agent, and that code is on the agent's side. An action the tenant's policy puts before a
 * person comes back `awaiting_confirmation`; only an operator's signed decision, through the approval service,
 * lets it proceed, and nothing the model or the runner sends can.
 */
export type RetrysafeAgentToolOptions = AgentToolOptions;

/** The registered tool `name` as an OpenAI Agents SDK function tool whose calls claim keyed actions. */
export function retrysafeAgentTool(name: string, opts: RetrysafeAgentToolOptions): FunctionTool {
  const registered = opts.registry.get(name);
  // The SDK takes a JSON Schema object for parameters: the registry's, as the planner sees it.
  const parameters = toolSchemas(opts.registry).find((s) => s.function.name === name)!.function.parameters;
  return tool({
    name,
    description: registered.description,
    parameters: { ...parameters, additionalProperties: false } as never,
    strict: false,
    needsApproval: false,
    execute: async (input: unknown) => JSON.stringify(await claimForAgent('openai-agents', opts, name, input)),
  }) as unknown as FunctionTool;
}
