import { Context, ApplicationFailure } from '@temporalio/activity';
import { DISPATCH_RETRY } from '../policies/timeouts';
import type { Intent, ToolRegistry } from '../policies/tool-registry';
import type { AnyTool } from '../policies/tool';
import type { CrashHook } from './crash-points';
import type { ActionLedger } from '../ledger';
import { settleBeforeSend, type BeforeSendDeps } from './before-send';
import { withHeartbeat } from './provider-call';
import type { VolatilePolicy } from './load-action-policy';
import { RequestLog } from './request-log';
import type { ExecutionReport } from '../messages/action';
import { requestLogIn } from '../policies/provider-requests';
import { RetrysafeError } from '../policies/errors';
import { noRetrysafeMetrics, type RetrysafeMetrics } from '../metrics/instruments';
import {
  DispatchAttempt,
  type AttemptDeps,
  type ExecuteInput,
  type ExecuteOutcome,
  type SendHooks,
} from './dispatch-attempt';

export type { ExecuteInput, ExecuteOutcome, SendHooks } from './dispatch-attempt';

export { KEY_HORIZON_MARGIN, keyHorizonMs, lookupOutcome, toolContext, withHeartbeat } from './provider-call';

export interface ExecuteDeps {
  tools: ToolRegistry;
  crash: CrashHook;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  /** What the executor counts (metrics/instruments.ts): attempts, requests and their answers, sends per dispatch. */
  metrics?: RetrysafeMetrics;
  /** The worker's ledger: an action workflow hands the executor its `dispatching` entry to write before sending. */
  ledger: ActionLedger;
  /** The worker's trust and tenant policy now: an approval handed to the executor is checked against them. */
  volatilePolicy?: (tenant: string) => Promise<VolatilePolicy>;
}

/**
 * The executor: one narrow path from a persisted intent to its tool, with the action's key. This table
 * is the only place that decides what a retry may do, whatever the tool's transport:
 *
 *   attempt 1 ─▶ execute ─▶ committed ─▶ confirmed
 *   attempt N>1 (the previous attempt died and may have reached the provider):
 *     idempotency-key, transactional, inside the key horizon ─▶ execute again with the same key (the
 *                                        provider or the dedupe row answers with the original)
 *     idempotency-key, transactional, past the key horizon (the tool's keyRetentionMs, less a margin, since
 *       the first possible send: the key may be forgotten and a resend taken as new):
 *         with a lookup    ─▶ as `lookup` below: found ─▶ confirmed; reliably absent ─▶ execute
 *         without a lookup ─▶ unknown, nothing sent
 *     lookup ─▶ look up; found ─▶ confirmed; empty inside the lag window ─▶ wait, look again;
 *               reliably absent ─▶ execute
 *     none   ─▶ unknown, nothing sent
 *   a read (kind 'read') changes nothing: it is executed again whatever its dedupe
 *   not-committed (429, 5xx, refused connection): retried here with jittered backoff
 *   ambiguous (reset, cut reply, timeout): the attempt is now maybe-sent, and the rows above apply
 *   rejected (declined, invalid, unauthorized, key conflict): a typed non-retryable failure
 * Before any of it, an action workflow's approval is checked once more and its `dispatching` entry written
 * (before-send.ts).
 */
export function createExecuteAction(deps: ExecuteDeps) {
  const attemptDeps: AttemptDeps = {
    crash: deps.crash,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    random: deps.random ?? Math.random,
    now: deps.now ?? Date.now,
    metrics: deps.metrics ?? noRetrysafeMetrics,
  };
  const beforeSend: BeforeSendDeps = {
    tools: deps.tools,
    metrics: attemptDeps.metrics,
    now: attemptDeps.now,
    ledger: deps.ledger,
    ...(deps.volatilePolicy ? { volatilePolicy: deps.volatilePolicy } : {}),
  };
  return (input: ExecuteInput, hooks: SendHooks = {}) => executeAction(beforeSend, attemptDeps, input, hooks);
}

/**
 * One attempt of the executor: the intent checked once more, what the workflow handed over settled, then the table
 * applied (dispatch-attempt.ts).
 */
async function executeAction(
  before: BeforeSendDeps,
  deps: AttemptDeps,
  input: ExecuteInput,
  hooks: SendHooks,
): Promise<ExecuteOutcome> {
  const ctx = Context.current();
  const { tool, toolInput } = verifiedInput(before.tools, input);
  deps.metrics.executorAttempt(tool.name);
  const requests = RequestLog.resume(ctx, deps.now);
  const attempt = await settled(ctx, before, input, () => requests.details());
  let ended = false;
  try {
    const outcome = await new DispatchAttempt(ctx, deps, attempt, tool, toolInput, requests, hooks).run();
    ended = true;
    return outcome;
  } catch (err) {
    // A failure this attempt raises ends the dispatch; a heartbeat timeout or a crash does not (the next attempt
    // resumes the request log and counts them all when the dispatch ends).
    ended = true;
    throw err;
  } finally {
    if (ended) deps.metrics.dispatchSends(tool.name, requests.sends);
  }
}

/**
 * What the action workflow handed over, settled under heartbeats (a slow ledger must not look like a dead attempt;
 * they carry the resumed request log, so the next attempt keeps it). The input the attempt runs with: when the row
 * shows that no earlier attempt of this dispatch got to its entry, nothing was sent, and this attempt is as good as
 * the first.
 */
async function settled(
  ctx: Context,
  deps: BeforeSendDeps,
  input: ExecuteInput,
  details: () => unknown,
): Promise<ExecuteInput> {
  const { key, intent, approval, record } = input;
  if (!record) {
    if (approval) throw new Error(`the approval of ${key} is checked against its ledger row, and none was handed`);
    return input;
  }
  const handed = { key, intent, record, ...(approval ? { approval } : {}) };
  const { earlierMayHaveSent } = await withHeartbeat(ctx, () => settleBeforeSend(deps, handed), details);
  return { ...input, earlierAttemptsUnsent: !earlierMayHaveSent };
}

/**
 * The intent as the tool takes it, checked once more against the hash the action was claimed with:
 * nothing reaches a provider under a key whose request it does not match.
 */
export function verifiedInput(
  tools: ToolRegistry,
  input: { key: string; intent: Intent; requestHash: string },
): { tool: AnyTool; toolInput: Record<string, unknown> } {
  try {
    const intent = tools.parseIntent(input.intent);
    const hash = tools.hash(intent);
    if (hash !== input.requestHash) {
      throw new RetrysafeError(
        'IntentMismatch',
        `action ${input.key}: the intent hashes to ${hash.slice(0, 12)}…, not the claimed ${input.requestHash.slice(0, 12)}…`,
        {
          key: input.key,
        },
      );
    }
    const { operation: _operation, ...toolInput } = intent;
    return { tool: tools.get(intent.operation), toolInput };
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
}

/** A refusal the executor decided (typed, not to be retried), as opposed to an attempt that died. */
export function isExecutorVerdict(err: unknown): err is ApplicationFailure {
  return (
    err instanceof ApplicationFailure &&
    (err.nonRetryable || (DISPATCH_RETRY.nonRetryableErrorTypes ?? []).includes(err.type ?? ''))
  );
}

/**
 * What one run of the executor reports: its outcome, or the refusal it decided (its code, message and requests).
 * Any other failure (an attempt that died) is thrown, for Temporal's retry.
 */
export async function executionReport(execute: () => Promise<ExecuteOutcome>): Promise<ExecutionReport> {
  try {
    return { kind: 'outcome', outcome: await execute() };
  } catch (err) {
    if (!isExecutorVerdict(err)) throw err;
    return {
      kind: 'rejected',
      code: err.type ?? 'OutcomeUnknown',
      message: err.message,
      ...requestLogIn(err.details?.[0]),
    };
  }
}
