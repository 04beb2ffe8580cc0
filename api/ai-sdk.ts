/**
 * `retrysafe/ai-sdk`: registered tools as Vercel AI SDK tools for an agent that runs outside Temporal, and a planner
 * for agent runs built on the AI SDK. `ai` (and `@ai-sdk/openai-compatible` for the planner) are the application's
 * dependencies: optional peer dependencies of this package.
 *
 * @packageDocumentation
 */
export { retrysafeTool } from '../adapters/ai-sdk/retrysafe-tool';
export type { RetrysafeToolOptions } from '../adapters/ai-sdk/retrysafe-tool';
export { AiSdkPlanner } from '../adapters/ai-sdk/ai-sdk-planner';
export { actionResult, refusalResult } from '../adapters/action-result';
export type { ActionResult, RefusalResult } from '../adapters/action-result';
export type { AgentToolOptions } from '../adapters/agent-claim';
