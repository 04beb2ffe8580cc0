import { randomUUID } from 'node:crypto';

import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  HEARTBEAT_INTERVAL_MS,
  firstIssue,
  outcomeOfError,
  type AnyTool,
  type ToolContext,
  type ToolOutcome,
} from 'retrysafe';
import type { CrashHook } from 'retrysafe/testing';

/**
 * The baseline for the example tools on real servers: the same tool code in a bare Temporal activity, the way a team
 * wraps a client call without retrysafe. Its definition, as for bare-charge.ts:
 *   - a fresh random key per attempt (the tool sends it as its idempotency key, Message-ID or dedupe row), since a
 *     naive client does not persist one, so a retried attempt is a new request;
 *   - no reconciliation: a lost reply, a crash or a timeout is simply retried by Temporal's retry policy;
 *   - a rejection fails without retry, every other answer short of committed is thrown and retried.
 * It honours the same RETRYSAFE_CRASH_AT points as the executor (by the tool's name), so both die at the same places.
 */
export interface BareToolInput {
  operation: string;
  [field: string]: unknown;
}

export interface BareToolResult {
  providerRef: string;
  /** The activity attempt that got the answer; above 1 means earlier attempts died or failed. */
  attempt: number;
}

export function createBareTool(tools: readonly AnyTool[], crash: CrashHook) {
  return async function bareTool({ operation, ...fields }: BareToolInput): Promise<BareToolResult> {
    const tool = tools.find((t) => t.name === operation);
    if (!tool) throw ApplicationFailure.nonRetryable(`bareTool: no tool ${operation}`, 'InvalidIntent');
    const parsed = tool.input.safeParse(fields);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error);
      throw ApplicationFailure.nonRetryable(`bareTool: ${field}: ${message}`, 'InvalidIntent');
    }
    const ctx = Context.current();
    const toolCtx: ToolContext = {
      key: `bare-${randomUUID()}`,
      attempt: ctx.info.attempt,
      heartbeat: () => ctx.heartbeat(),
      signal: ctx.cancellationSignal,
      log: { info: (msg, meta) => ctx.log.info(msg, meta), warn: (msg, meta) => ctx.log.warn(msg, meta) },
    };
    crash('before-send', operation);
    // Heartbeats while the provider works, so the baseline is ended by crashes, not by its own timeout.
    const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
    let outcome: ToolOutcome;
    try {
      ctx.heartbeat();
      outcome = await tool.execute(parsed.data, toolCtx);
    } catch (err) {
      outcome = outcomeOfError(err, operation);
    } finally {
      clearInterval(timer);
    }
    crash('after-commit', operation);
    switch (outcome.outcome) {
      case 'committed':
        return { providerRef: outcome.providerRef, attempt: ctx.info.attempt };
      case 'rejected':
        throw ApplicationFailure.nonRetryable(`${operation} rejected: ${outcome.message}`, 'BusinessRejected');
      case 'not-committed':
        throw ApplicationFailure.retryable(`${operation}: ${outcome.reason}`, 'TransientProviderError');
      case 'ambiguous':
        throw ApplicationFailure.retryable(`${operation}: ${outcome.message}`, 'AmbiguousProviderError');
    }
  };
}
