/** The example worker's workflows: the engine's, and the example flows built on its public API. */
export { actionWorkflowV3, agentRunWorkflowV3 } from 'retrysafe/workflow';
export { renewalWorkflow } from './renewal';
export { fulfillmentAgentWorkflow } from './fulfillment-agent';
export {
  baselineChargeWorkflow,
  baselineChildChargeWorkflow,
  baselineLocalChargeWorkflow,
  baselineSignalWorkflow,
  baselineUpdateWorkflow,
  bareToolWorkflow,
  retrysafeChargeWorkflow,
} from './baseline';
export { manyActionsWorkflow } from './scale';
