import type { Duration, RetryPolicy } from '@temporalio/common';

/**
 * Timeouts and retry budgets, each with the reason for its default. Workflows import these; no inline
 * literals. Recovery after a worker dies is bounded by DISPATCH_HEARTBEAT_TIMEOUT plus the retry interval, or by
 * ACTION_WORKFLOW_TASK_TIMEOUT when the dead worker had just been handed one of the action's workflow tasks.
 */

/**
 * A run's workflow task handed to a worker that then dies is retried only after this timeout (Temporal's default
 * is 10 s). Workflow tasks are small (no I/O, a few commands), so 3 s is ample even on a loaded 2-core machine,
 * and it keeps SIGKILL recovery near the heartbeat timeout instead of 10 s behind it.
 */
export const WORKFLOW_TASK_TIMEOUT: Duration = '3s';
/**
 * An action workflow's task timeout. The server hands a task to a worker's open poll even as the worker dies
 * (the provider's webhook arrives at the commit, the moment a kill after the commit lands), and the action then
 * answers nothing, not even its owner's retried claim, until that task times out: at 3 s SIGKILL recovery took
 * 3.4–4.0 s, at 2 s 2.3–2.5 s (`npm run bench -- --recoveries 10`). Action tasks stay small (an action's history
 * is tens of events): with 300 actions at once on one 2-core worker the longest took 1.04 s (p99 0.70 s), so 2 s
 * still leaves room; a task that does time out is retried, never lost. Runs keep WORKFLOW_TASK_TIMEOUT: a run's
 * history grows with its actions, and its longest task in that test took 1.7 s.
 */
export const ACTION_WORKFLOW_TASK_TIMEOUT: Duration = '2s';

/** One HTTP request to a provider: 5 s, long enough for a slow gateway, short enough to retry inside a step. */
export const PROVIDER_REQUEST_TIMEOUT_MS = 5_000;
/** The executor heartbeats this often while it waits on a provider, so a dead worker is noticed quickly. */
export const HEARTBEAT_INTERVAL_MS = 500;
/** 2 s without a heartbeat and Temporal retries the attempt elsewhere: a killed worker costs ~2 s, not minutes. */
export const DISPATCH_HEARTBEAT_TIMEOUT: Duration = '2s';
/** The step deadline for one dispatch attempt, including its in-attempt retries of transient errors. */
export const DISPATCH_START_TO_CLOSE: Duration = '60s';
/** The whole dispatch across worker crashes; past it the action is unknown, not retried forever. */
export const DISPATCH_SCHEDULE_TO_CLOSE: Duration = '5m';
/**
 * How long an action waits for the report of an owner that sends its first dispatch itself: its activity
 * has DISPATCH_SCHEDULE_TO_CLOSE, so past this no attempt of it can still start. Then the action takes over.
 */
export const OWNER_REPORT_WINDOW: Duration = '6m';
/**
 * Temporal-level retries only happen after an attempt died (worker crash, heartbeat or start-to-close timeout).
 * Transient provider errors are retried inside the attempt with jittered backoff (see TRANSIENT_BACKOFF).
 */
export const DISPATCH_RETRY: RetryPolicy = {
  initialInterval: '200ms',
  backoffCoefficient: 2,
  maximumInterval: '5s',
  maximumAttempts: 10,
  nonRetryableErrorTypes: [
    'IntentMismatch',
    'InvalidIntent',
    'BusinessRejected',
    'AuthorizationRejected',
    'ProviderValidationRejected',
    'OutcomeUnknown',
    'CeilingReached',
  ],
};
/**
 * The options of every activity that may send to a provider: the executor's, and a run's own (its act on the
 * ledger row, 0.2's claim and send). The same heartbeat and retries everywhere, so a dead attempt costs the same.
 */
export const SENDING_ACTIVITY = {
  startToCloseTimeout: DISPATCH_START_TO_CLOSE,
  scheduleToCloseTimeout: DISPATCH_SCHEDULE_TO_CLOSE,
  heartbeatTimeout: DISPATCH_HEARTBEAT_TIMEOUT,
  retry: DISPATCH_RETRY,
} as const;
/**
 * A run's act in its own workflow task: a local activity with the sending activity's deadlines and retries, and no
 * heartbeat (a local activity has none; the SDK keeps the workflow task alive while it runs). A worker that dies in it
 * is noticed when the run's workflow task times out (WORKFLOW_TASK_TIMEOUT), and the act runs again with the task.
 * Tools whose calls may run past about 2 s (`longCalls`) act as activities with SENDING_ACTIVITY instead: past 80 %
 * of the task timeout the SDK heartbeats the task, a workflow task and three events each time, and a long call lost
 * with its worker starts over, where an activity's next attempt resumes its heartbeated request log.
 */
export const LOCAL_ACT = {
  startToCloseTimeout: DISPATCH_START_TO_CLOSE,
  scheduleToCloseTimeout: DISPATCH_SCHEDULE_TO_CLOSE,
  retry: DISPATCH_RETRY,
} as const;
/** Backoff for 429 / 5xx / resets inside one attempt: 250 ms doubling to 4 s, full jitter, at most 6 tries. */
export const TRANSIENT_BACKOFF = { initialMs: 250, maxMs: 4_000, maxTries: 6 } as const;

/** Claiming an action talks only to Temporal; retried quickly and often because it is idempotent. */
export const CLAIM_START_TO_CLOSE: Duration = '30s';
/** A claim heartbeats while it waits for the action to answer; a worker that died mid-claim is noticed this soon. */
export const CLAIM_HEARTBEAT_TIMEOUT: Duration = '5s';
export const CLAIM_RETRY: RetryPolicy = {
  initialInterval: '200ms',
  maximumInterval: '5s',
  nonRetryableErrorTypes: [
    'IntentMismatch',
    'InvalidIntent',
    'InvalidActionKey',
    'UnknownOperation',
    'PayloadTooLarge',
  ],
};

/** Reads are safe to repeat; a short timeout and default retries. */
export const READ_START_TO_CLOSE: Duration = '15s';

/** Reconciliation lookups: how many checks, how far apart, before an unknown action goes to needs_review. */
export const RECONCILE_MAX_CHECKS = 6;
export const RECONCILE_INTERVAL: Duration = '5s';
/** An unknown or needs_review action is escalated after this long without resolution (source article: 24 h). */
export const ESCALATION_WINDOW: Duration = '24h';
/** A confirmed, compensatable action stays open this long for its run to settle or compensate it. */
export const COMPENSATION_WINDOW: Duration = '7d';
/** After reconciliation proves absence, resend with the same key at most this many times before a human looks. */
export const MAX_REDISPATCHES = 3;
/** An action awaiting confirmation fails with no effect if no verified decision arrives within a day. */
export const CONFIRMATION_WINDOW: Duration = '24h';
/** Loading the tenant's policy and the approvers' keys from the worker's configuration. */
export const POLICY_START_TO_CLOSE: Duration = '10s';

/** One planner activity attempt: the request timeout plus room to parse and record. */
export const PLAN_START_TO_CLOSE: Duration = '45s';
/**
 * Transport failures (reset, 429, 5xx, timeout) are retried with backoff; a refused request, bad facts or an
 * exhausted script are final. Invalid model output is not an error at all: it is a recorded decision.
 */
export const PLAN_RETRY: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
  maximumAttempts: 5,
  nonRetryableErrorTypes: [
    'AuthorizationRejected',
    'ProviderValidationRejected',
    'InvalidPlannerFacts',
    'PlannerScriptExhausted',
  ],
};
