import type { Client } from '@temporalio/client';
import { historyAsJson } from '../../lib/history-json';

/**
 * What a burst's workflows went through besides the happy path, read from their histories after the burst: a slow
 * tail is explained by retried activities (and why they were retried), workflow tasks that timed out or failed, and
 * the activities that ran (a run whose act on its record ended without a verdict claims the action instead).
 */
export interface BurstHealth {
  workflows: number;
  /** Histories that could not be read (deleted, or the server failed to answer). */
  unread: number;
  eventsP50: number;
  eventsMax: number;
  workflowTaskTimeouts: number;
  workflowTaskFailures: number;
  /** Activities whose last attempt was not their first. */
  retriedActivities: number;
  /** Why each retried activity's previous attempt ended: the timeout type or the failure's message. */
  retriedBecause: Record<string, number>;
  /** Activities that ran, by type, across the burst's workflows. */
  activities: Record<string, number>;
}

/** Histories fetched at once: the dev server answers them quickly, and more only queue. */
const FETCHES_AT_ONCE = 16;

interface JsonFailure {
  message?: string;
  timeoutFailureInfo?: { timeoutType?: string };
}
interface JsonEvent {
  eventType?: string;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  activityTaskStartedEventAttributes?: { attempt?: number; lastFailure?: JsonFailure };
}

/** A tally of `workflows` histories with nothing counted yet. */
export function emptyHealth(workflows: number): BurstHealth {
  return {
    workflows,
    unread: 0,
    eventsP50: 0,
    eventsMax: 0,
    workflowTaskTimeouts: 0,
    workflowTaskFailures: 0,
    retriedActivities: 0,
    retriedBecause: {},
    activities: {},
  };
}

export async function burstHealth(client: Client, workflowIds: readonly string[]): Promise<BurstHealth> {
  const health = emptyHealth(workflowIds.length);
  const sizes: number[] = [];
  let next = 0;
  const reader = async () => {
    while (next < workflowIds.length) {
      const id = workflowIds[next++];
      let events: JsonEvent[];
      try {
        events = (historyAsJson(await client.workflow.getHandle(id).fetchHistory()).events ?? []) as JsonEvent[];
      } catch {
        health.unread++;
        continue;
      }
      sizes.push(events.length);
      tally(health, events);
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCHES_AT_ONCE, workflowIds.length) }, reader));
  sizes.sort((a, b) => a - b);
  health.eventsP50 = sizes.length ? sizes[Math.floor((sizes.length - 1) / 2)] : 0;
  health.eventsMax = sizes.length ? sizes[sizes.length - 1] : 0;
  return health;
}

/** Adds one history's events to the burst's tally. */
export function tally(health: BurstHealth, events: readonly JsonEvent[]): void {
  for (const e of events) {
    switch (e.eventType) {
      case 'EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT':
        health.workflowTaskTimeouts++;
        break;
      case 'EVENT_TYPE_WORKFLOW_TASK_FAILED':
        health.workflowTaskFailures++;
        break;
      case 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED': {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        health.activities[name] = (health.activities[name] ?? 0) + 1;
        break;
      }
      case 'EVENT_TYPE_ACTIVITY_TASK_STARTED': {
        const started = e.activityTaskStartedEventAttributes;
        if ((started?.attempt ?? 1) > 1) {
          health.retriedActivities++;
          const why = reasonOf(started?.lastFailure);
          health.retriedBecause[why] = (health.retriedBecause[why] ?? 0) + 1;
        }
        break;
      }
    }
  }
}

function reasonOf(failure: JsonFailure | undefined): string {
  const timeout = failure?.timeoutFailureInfo?.timeoutType;
  if (timeout)
    return (
      timeout
        .replace(/^TIMEOUT_TYPE_/, '')
        .toLowerCase()
        .replace(/_/g, '-') + ' timeout'
    );
  return (failure?.message ?? 'no failure recorded').slice(0, 80);
}

/** One line for the progress log: what differs from a clean burst, or that nothing did. */
export function describeHealth(h: BurstHealth): string {
  const parts = [`events p50 ${h.eventsP50}, max ${h.eventsMax}`];
  parts.push(`workflow task timeouts ${h.workflowTaskTimeouts}, failures ${h.workflowTaskFailures}`);
  const why = Object.entries(h.retriedBecause)
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');
  parts.push(`retried activities ${h.retriedActivities}${why ? ` (${why})` : ''}`);
  parts.push(
    `activities ${Object.entries(h.activities)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')}`,
  );
  if (h.unread) parts.push(`${h.unread} histories unread`);
  return parts.join('; ');
}
