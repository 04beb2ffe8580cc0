/**
 * `retrysafe/dev`: the local stack for developing and testing against, from code. {@link startDevServer} starts the
 * Temporal CLI's dev server with retrysafe's search attributes and settings, on loopback; `retrysafe dev` runs the
 * same with the approval service and page, the codec endpoint and the Web UI, and writes the settings a worker and
 * a client load.
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
export { resolveTemporalCli } from '../cli/toolchain/resolve-temporal';
export type { ResolvedTool } from '../cli/toolchain/resolve-temporal';
