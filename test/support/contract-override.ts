import { z } from 'zod';
import type { AnyTool } from '../../policies/tool';

/** What a tool's contract says instead, in a worker process: no lookup, another key retention, or none. */
export const ContractOverride = z.strictObject({
  lookup: z.literal(false).optional(),
  /** null: the contract declares no retention (keys kept for good). */
  keyRetentionMs: z.int().positive().nullable().optional(),
});
export type ContractOverride = z.infer<typeof ContractOverride>;

/** The example tools with a test's contract changes applied; a change for a tool that does not exist is an error. */
export function withContracts(tools: readonly AnyTool[], contracts: Record<string, ContractOverride>): AnyTool[] {
  for (const name of Object.keys(contracts)) {
    if (!tools.some((t) => t.name === name)) throw new Error(`contract change for unknown tool ${name}`);
  }
  return tools.map((tool) => {
    const change = contracts[tool.name];
    if (!change) return tool;
    const { lookup, keyRetentionMs, ...rest } = tool;
    const retention = change.keyRetentionMs === undefined ? keyRetentionMs : change.keyRetentionMs;
    return {
      ...rest,
      ...(change.lookup === false || !lookup ? {} : { lookup }),
      ...(retention === null || retention === undefined ? {} : { keyRetentionMs: retention }),
    };
  });
}
