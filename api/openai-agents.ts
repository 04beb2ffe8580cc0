/**
 * `retrysafe/openai-agents`: registered tools as OpenAI Agents SDK function tools, for an agent that runs outside
 * Temporal. `@openai/agents` is the application's dependency: an optional peer dependency of this package.
 *
 * @packageDocumentation
 */
export { retrysafeAgentTool } from '../adapters/openai-agents/retrysafe-agent-tool';
export type { RetrysafeAgentToolOptions } from '../adapters/openai-agents/retrysafe-agent-tool';
export { actionResult, refusalResult } from '../adapters/action-result';
export type { ActionResult, RefusalResult } from '../adapters/action-result';
export type { AgentToolOptions } from '../adapters/agent-claim';
