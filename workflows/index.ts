/** The engine's workflows. A worker's workflow module re-exports these beside its own (see examples/workflows). */
export { actionWorkflow } from './action';
export { agentRunWorkflow } from './agent-run';
