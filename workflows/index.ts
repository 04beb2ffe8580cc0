export { effectWorkflow } from './effect';
export { renewalWorkflow } from './renewal';
export { baselineChargeWorkflow, baselineSignalWorkflow } from './baseline';
