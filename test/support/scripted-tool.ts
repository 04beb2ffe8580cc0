import { z } from 'zod';
import { defineTool, type DedupeCapability } from '../../policies/tool';
import type { LookupAnswer, ToolOutcome } from '../../policies/tool-outcome';
import { createToolRegistry } from '../../policies/tool-registry';

/**
 * A tool whose provider is a script, for the executor's tests: each execute answers the next outcome (or throws the
 * next Error), each lookup the next answer, and `calls` counts both. Running past a script fails the test.
 */
export function scriptedTool(opts: {
  name: string;
  dedupe: DedupeCapability;
  kind?: 'read' | 'mutation';
  lagMs?: number;
  keyRetentionMs?: number;
  outcomes: Array<ToolOutcome | Error>;
  lookups?: LookupAnswer[];
  /** Runs before each execute answers: what the provider could observe at that moment. */
  onExecute?: () => Promise<void>;
}) {
  const calls = { execute: 0, lookup: 0 };
  const tool = defineTool({
    name: opts.name,
    version: 1,
    description: `${opts.name}.`,
    input: z.strictObject({ n: z.number() }),
    kind: opts.kind ?? 'mutation',
    dedupe: opts.dedupe,
    readAfterWriteLagMs: opts.lagMs ?? 0,
    ...(opts.keyRetentionMs !== undefined ? { keyRetentionMs: opts.keyRetentionMs } : {}),
    riskClass: 'routine-message',
    summarize: (i) => `${opts.name} ${i.n}`,
    async execute() {
      await opts.onExecute?.();
      const next = opts.outcomes[calls.execute++];
      if (next === undefined) throw new Error('the script ran out: the executor executed once more than allowed');
      if (next instanceof Error) throw next;
      return next;
    },
    ...(opts.lookups
      ? {
          async lookup() {
            const next = opts.lookups![calls.lookup++];
            if (!next) throw new Error('the lookup script ran out');
            return next;
          },
        }
      : {}),
  });
  const tools = createToolRegistry([tool]);
  const intent = tools.parseIntent({ operation: opts.name, n: 1 });
  return { tool, tools, intent, calls };
}
