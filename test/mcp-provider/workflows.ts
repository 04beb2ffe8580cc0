/** The workflows of this test's worker: the engine's only. */
export { actionWorkflowV3, agentRunWorkflowV3 } from 'retrysafe/workflow';
