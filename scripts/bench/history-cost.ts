/**
 * Where an action's time goes, read from its workflow history: how many events and workflow tasks it took, how
 * many activities, local activities, timers, signals and updates, and how its wall time splits between workflow
 * tasks waiting for a worker, workflow tasks being processed, and activities. Issue 16's first measurement: the
 * critical path is what a shorter design must remove, so it is counted before anything is changed.
 */
import { readFile } from 'node:fs/promises';

/** A history event as the proto's JSON form (`temporal workflow show --output json`) spells the fields read here. */
interface JsonEvent {
  eventId?: string | number;
  eventType?: string;
  eventTime?: string | { seconds?: string | number; nanos?: number };
  markerRecordedEventAttributes?: { markerName?: string };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  activityTaskStartedEventAttributes?: { scheduledEventId?: string | number };
  activityTaskCompletedEventAttributes?: { scheduledEventId?: string | number };
  workflowTaskStartedEventAttributes?: { scheduledEventId?: string | number };
  workflowTaskCompletedEventAttributes?: { scheduledEventId?: string | number; startedEventId?: string | number };
}

export interface HistoryCost {
  events: number;
  workflowTasks: number;
  activities: Record<string, number>;
  localActivities: number;
  timersStarted: number;
  signalsReceived: number;
  signalsSent: number;
  updates: number;
  /** First event to last, milliseconds. */
  wallMs: number;
  /** Workflow tasks from scheduled to started: waiting for a worker to poll. */
  workflowTaskQueueMs: number;
  /** Workflow tasks from started to completed: the worker running workflow code (and its local activities). */
  workflowTaskRunMs: number;
  /** Activities from scheduled to completed. */
  activityMs: number;
}

const type = (e: JsonEvent) => (e.eventType ?? '').replace(/^EVENT_TYPE_/, '');
const id = (v: string | number | undefined) => (v === undefined ? undefined : String(v));

function timeMs(e: JsonEvent): number {
  const t = e.eventTime;
  if (typeof t === 'string') return Date.parse(t);
  if (t && t.seconds !== undefined) return Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
  throw new Error(`event ${id(e.eventId)} has no eventTime`);
}

export function historyCost(events: readonly JsonEvent[]): HistoryCost {
  const byId = new Map(events.map((e) => [id(e.eventId), e]));
  const cost: HistoryCost = {
    events: events.length,
    workflowTasks: 0,
    activities: {},
    localActivities: 0,
    timersStarted: 0,
    signalsReceived: 0,
    signalsSent: 0,
    updates: 0,
    wallMs: events.length ? timeMs(events[events.length - 1]) - timeMs(events[0]) : 0,
    workflowTaskQueueMs: 0,
    workflowTaskRunMs: 0,
    activityMs: 0,
  };
  for (const e of events) {
    switch (type(e)) {
      case 'WORKFLOW_TASK_STARTED': {
        const scheduled = byId.get(id(e.workflowTaskStartedEventAttributes?.scheduledEventId));
        if (scheduled) cost.workflowTaskQueueMs += timeMs(e) - timeMs(scheduled);
        break;
      }
      case 'WORKFLOW_TASK_COMPLETED': {
        cost.workflowTasks++;
        const started = byId.get(id(e.workflowTaskCompletedEventAttributes?.startedEventId));
        if (started) cost.workflowTaskRunMs += timeMs(e) - timeMs(started);
        break;
      }
      case 'ACTIVITY_TASK_SCHEDULED': {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        cost.activities[name] = (cost.activities[name] ?? 0) + 1;
        break;
      }
      case 'ACTIVITY_TASK_COMPLETED': {
        const scheduled = byId.get(id(e.activityTaskCompletedEventAttributes?.scheduledEventId));
        if (scheduled) cost.activityMs += timeMs(e) - timeMs(scheduled);
        break;
      }
      case 'MARKER_RECORDED':
        if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') cost.localActivities++;
        break;
      case 'TIMER_STARTED':
        cost.timersStarted++;
        break;
      case 'WORKFLOW_EXECUTION_SIGNALED':
        cost.signalsReceived++;
        break;
      case 'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED':
        cost.signalsSent++;
        break;
      case 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED':
        cost.updates++;
        break;
    }
  }
  return cost;
}

/** Reads a history file: the CLI's JSON (`{ events }`) or the form the replay fixtures keep (`{ history: { events } }`). */
export async function readHistoryEvents(file: string): Promise<JsonEvent[]> {
  const json = JSON.parse(await readFile(file, 'utf8')) as { events?: JsonEvent[]; history?: { events?: JsonEvent[] } };
  const events = json.events ?? json.history?.events;
  if (!Array.isArray(events)) throw new Error(`${file}: no events (expected { events } or { history: { events } })`);
  return events;
}

export function formatCost(name: string, c: HistoryCost): string {
  const activities = Object.entries(c.activities)
    .map(([n, count]) => `${n}×${count}`)
    .join(', ');
  return [
    `${name}: ${c.events} events, ${c.workflowTasks} workflow tasks, ${c.localActivities} local activities, ` +
      `activities ${activities || 'none'}, ${c.timersStarted} timers, signals ${c.signalsReceived} in / ${c.signalsSent} out, ` +
      `${c.updates} updates`,
    `  wall ${c.wallMs.toFixed(1)} ms: workflow tasks queued ${c.workflowTaskQueueMs.toFixed(1)} ms, ` +
      `running ${c.workflowTaskRunMs.toFixed(1)} ms; activities ${c.activityMs.toFixed(1)} ms (overlapping)`,
  ].join('\n');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write(
      'usage: npm run history-cost -- HISTORY.json [...]   (temporal workflow show --output json)\n',
    );
    process.exit(2);
  }
  void (async () => {
    for (const file of files) process.stdout.write(`${formatCost(file, historyCost(await readHistoryEvents(file)))}\n`);
  })().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}
