export { effectWorkflow } from './effect';
export { renewalWorkflow } from './renewal';
export { fulfillmentAgentWorkflow } from './fulfillment-agent';
export { baselineChargeWorkflow, baselineChildChargeWorkflow, baselineSignalWorkflow, retrysafeChargeWorkflow } from './baseline';
export { agentRunWorkflow } from './agent-run';
