import type { EphemeralServerExecutable } from '@temporalio/testing';

import type { ResolvedTool } from '../../cli/toolchain/resolve-temporal';

/**
 * What `TestWorkflowEnvironment.createLocal` / `createTimeSkipping` should run for a resolved tool: the file
 * itself, or the SDK's own cached download when nothing local exists.
 */
export function toEphemeralExecutable(tool: ResolvedTool): EphemeralServerExecutable {
  return tool.path === undefined ? { type: 'cached-download' } : { type: 'existing-path', path: tool.path };
}
