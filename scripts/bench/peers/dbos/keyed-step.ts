import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Intent, ToolContext, ToolOutcome, ToolRegistry } from 'retrysafe';
import type { CrashHook } from 'retrysafe/testing';

/**
 * One side effect as one DBOS step: the example tool's own `execute`, sent with the action key. DBOS checkpoints
 * the step's result once it returns; until then a crash means the whole step runs again on recovery, whatever
 * the provider already did. The crash hook fires after the provider committed and before the step returns,
 * which is exactly that window.
 */

/** A tool answered something other than `committed`; only `not-committed` (nothing happened) is retried. */
export class ToolOutcomeError extends Error {
  override name = 'ToolOutcomeError';
  constructor(
    readonly operation: string,
    readonly outcome: Exclude<ToolOutcome, { outcome: 'committed' }>,
  ) {
    super(`${operation} ended ${outcome.outcome}: ${'reason' in outcome ? outcome.reason : outcome.message}`);
  }
}

const retryable = (err: unknown) => err instanceof ToolOutcomeError && err.outcome.outcome === 'not-committed';

/** Runs `intent` once under `key` inside the current workflow; resolves to the provider's reference. */
export function keyedStep(tools: ToolRegistry, intent: Intent, key: string, crash: CrashHook): Promise<string> {
  const { operation, ...input } = tools.parseIntent(intent);
  const tool = tools.get(operation);
  return DBOS.runStep(
    async () => {
      crash('before-send', operation);
      const outcome = await tool.execute(input, toolContext(key));
      if (outcome.outcome !== 'committed') throw new ToolOutcomeError(operation, outcome);
      crash('after-commit', operation);
      return outcome.providerRef;
    },
    { name: operation, retriesAllowed: true, maxAttempts: 3, intervalSeconds: 0.2, shouldRetry: retryable },
  );
}

function toolContext(key: string): ToolContext {
  const status = DBOS.stepStatus;
  const line = (msg: string, meta?: Record<string, unknown>) => (meta ? `${msg} ${JSON.stringify(meta)}` : msg);
  return {
    key,
    attempt: status?.currentAttempt ?? 1,
    // DBOS has no heartbeats: a step is alive as long as its process is.
    heartbeat: () => undefined,
    signal: status?.cancelSignal ?? new AbortController().signal,
    log: {
      info: (msg, meta) => DBOS.logger.info(line(msg, meta)),
      warn: (msg, meta) => DBOS.logger.warn(line(msg, meta)),
    },
  };
}
