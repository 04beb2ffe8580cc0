export { effectWorkflow } from './effect';
export { renewalWorkflow } from './renewal';
