import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Ledger } from '../../examples/sandbox-providers/spawn';
import { RetrysafeError } from 'retrysafe';
import { isFinal, type ActionStatus } from '../../policies/action-status';
import { SA_ACTION_KEYS, SA_STATUS } from '../../policies/search-attributes';
import type { ActionLedger } from 'retrysafe/worker';

/**
 * Read-only looks at Temporal and the providers for verification. Everything here uses describe (served
 * by the server from the execution's own state, no worker needed, not the lagging visibility store) and
 * retries through a dev-server restart.
 */

const RETRY_MS = 250;
/** A restart takes a few seconds; calls made meanwhile are retried this long. */
const TRANSIENT_BUDGET_MS = 30_000;

/**
 * Retries `fn` through transient failures (a server restart, an update waiting for a worker that is being
 * replaced) for up to `budgetMs` or until `signal` aborts. Answers that are final are not retried:
 * not found, a failed workflow, a typed retrysafe error.
 */
export async function retrying<T>(
  fn: () => Promise<T>,
  opts: { budgetMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.budgetMs ?? TRANSIENT_BUDGET_MS);
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      const final =
        err instanceof WorkflowNotFoundError || err instanceof WorkflowFailedError || err instanceof RetrysafeError;
      if (final || Date.now() >= deadline || opts.signal?.aborted) throw err;
      await sleep(RETRY_MS);
    }
  }
}

/**
 * A workflow's result, waiting through server restarts (a long poll cut by a restart is simply asked
 * again) until the workflow closes or `signal` aborts. A failed workflow is an outcome, not an error here.
 */
export async function awaitWorkflowResult<T>(
  fetch: () => Promise<T>,
  signal: AbortSignal,
): Promise<{ ok: true; value: T } | { ok: false; error: Error }> {
  for (;;) {
    try {
      return { ok: true, value: await fetch() };
    } catch (err) {
      if (err instanceof WorkflowFailedError || signal.aborted) return { ok: false, error: err as Error };
      await sleep(RETRY_MS);
    }
  }
}

/** The innermost cause's message: Temporal wraps the interesting part (the activity's failure) deep inside. */
export function rootMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}

export interface ActionState {
  key: string;
  /** RetrysafeStatus as the action last published it, or its ledger row's status when it has no workflow. */
  status: string;
  running: boolean;
  /** `ledger`: no action workflow ran; the run acted on the row (the record-first path). */
  source?: 'ledger';
  /** For a row left unsettled: its audit trail and alarms, the evidence a failure report needs. */
  trail?: string;
}

/**
 * The action's state from its workflow, or, when none ran (a run acted on its ledger row), from the row: a row that
 * is not settled with no workflow to take it over is left unresolved (see leftUnresolved).
 */
export async function actionState(
  client: Client,
  key: string,
  // The trail's reads are optional: a caller that polls (bench:recovery) passes `get` alone and pays for nothing else.
  ledger?: Pick<ActionLedger, 'get'> & Partial<Pick<ActionLedger, 'audit' | 'alarms'>>,
): Promise<ActionState | undefined> {
  try {
    const d = await retrying(() => client.workflow.getHandle(key).describe());
    return { key, status: String(d.typedSearchAttributes.get(SA_STATUS) ?? '?'), running: d.status.name === 'RUNNING' };
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const row = await ledger?.get(key);
    if (!ledger || !row) return undefined;
    const trail = isFinal(row.status) ? undefined : await rowTrail(ledger, key, row.holder);
    return { key, status: row.status, running: false, source: 'ledger', ...(trail ? { trail } : {}) };
  }
}

/** `1 planned at … by run:… (reason) → 2 dispatching …; holder …; alarm …`, or undefined without them. */
async function rowTrail(
  ledger: Partial<Pick<ActionLedger, 'audit' | 'alarms'>>,
  key: string,
  holder: string | null | undefined,
): Promise<string | undefined> {
  if (!ledger.audit || !ledger.alarms) return undefined;
  const [entries, alarms] = await Promise.all([ledger.audit(key), ledger.alarms({ key })]);
  return [
    entries.map((e) => `${e.seq} ${e.status} at ${e.at} by ${e.by ?? '?'} (${e.reason})`).join(' → '),
    `holder ${holder ?? 'none'}`,
    ...alarms.map((a) => `alarm ${a.kind} at ${a.at}: ${a.detail}`),
  ].join('; ');
}

/** The newest action keys a run has claimed (its RetrysafeActionKeys search attribute: as many as fit 2 KiB). */
export async function runActionKeys(client: Client, runWorkflowId: string): Promise<string[]> {
  try {
    const d = await retrying(() => client.workflow.getHandle(runWorkflowId).describe());
    return [...(d.typedSearchAttributes.get(SA_ACTION_KEYS) ?? [])].map(String);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return [];
    throw err;
  }
}

/** Polls an action until its published status is one of `statuses`; undefined if `signal` aborts first. */
export async function waitForActionStatus(
  client: Client,
  key: string,
  statuses: readonly string[],
  signal: AbortSignal,
): Promise<ActionState | undefined> {
  while (!signal.aborted) {
    const state = await actionState(client, key).catch(() => undefined);
    if (state && statuses.includes(state.status)) return state;
    await sleep(RETRY_MS);
  }
  return undefined;
}

export type LedgerRecord = Record<string, unknown> & { id: string };

/** Records of one collection matching every given field, from a ledger read at the provider. */
export function recordsWhere(ledger: Ledger, collection: string, fields: Record<string, unknown>): LedgerRecord[] {
  return (ledger.records[collection] ?? []).filter((r) =>
    Object.entries(fields).every(([k, v]) => (r as Record<string, unknown>)[k] === v),
  ) as LedgerRecord[];
}

/** One entry per action a scenario expects resolved but that was left unknown or in needs_review. */
export function leftUnresolved(states: ReadonlyArray<ActionState | undefined>): string[] {
  return states.flatMap((s) => {
    if (!s) return [];
    if (s.status === 'unknown' || s.status === 'needs_review') return [`${s.key} left ${s.status}`];
    // A row no workflow holds must be settled: one left planned or dispatching is an action nobody finishes.
    if (s.source === 'ledger' && !isFinal(s.status as ActionStatus)) {
      return [
        `${s.key} left ${s.status} on its ledger row, with no workflow${s.trail ? `; its trail: ${s.trail}` : ''}`,
      ];
    }
    return [];
  });
}

/** Counts the states retrysafe leaves for a person: each must be one the scenario expects. */
export function countOpen(states: ReadonlyArray<ActionState | undefined>) {
  return {
    unknown: states.filter((s) => s?.status === 'unknown').length,
    needsReview: states.filter((s) => s?.status === 'needs_review').length,
  };
}
