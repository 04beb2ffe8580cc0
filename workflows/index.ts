/** The engine's workflows. A worker's workflow module re-exports these beside its own (see examples/workflows). */
export { actionWorkflowV3 } from './action';
export { agentRunWorkflowV3 } from './agent-run';
