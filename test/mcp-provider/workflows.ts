/** The workflows of this test's worker: the engine's only. */
export { actionWorkflow, agentRunWorkflow } from 'retrysafe/workflow';
