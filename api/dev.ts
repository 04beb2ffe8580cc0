/**
 * `retrysafe/dev`: the local stack for developing and testing against, from code. {@link startDevStack} is what
 * `retrysafe dev` runs: the Temporal CLI's dev server with retrysafe's search attributes and settings, the approval
 * service and page, the codec endpoint and the Web UI, and the settings a worker and a client load;
 * {@link startDevServer} is the dev server alone.
 *
 * @packageDocumentation
 */
export {
  DEV_SERVER_DYNAMIC_CONFIG,
  FAST_DELETION_DYNAMIC_CONFIG,
  startDevServer,
  webUiWorkflowUrl,
} from '../cli/dev/dev-server';
export type { DevServer, StartDevServerOptions } from '../cli/dev/dev-server';
export { startDevStack } from '../cli/dev/dev-stack';
export type { DevStack, DevStackOptions } from '../cli/dev/dev-stack';
export { findStackDir, readStackFile, withStackSettings } from '../cli/dev/stack-file';
export type { StackFile } from '../cli/dev/stack-file';
export { resolveTemporalCli } from '../cli/toolchain/resolve-temporal';
export type { ResolvedTool, ResolveOptions, ToolSource } from '../cli/toolchain/resolve-temporal';
export type { ApprovalServer } from '../cli/approvals/approval-http';
export type { DemoOperator } from '../cli/dev/local-operator';
