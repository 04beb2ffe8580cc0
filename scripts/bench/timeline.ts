import type { Client } from '@temporalio/client';

/**
 * One operation's history events and the harness's own marks (sent, answered, SIGKILL) on one clock, for
 * `npm run bench:timeline`. History event times are the server's; marks are Date.now() on the same machine.
 */
export interface TimedEvent {
  ms: number;
  who: string;
  what: string;
}

type Attributes = {
  activityType?: { name?: string };
  signalName?: string;
  markerName?: string;
  attempt?: number;
  identity?: string;
  taskQueue?: { name?: string; kind?: number | string };
  acceptedRequest?: { input?: { name?: string } };
};

/** Sticky task queues have kind 2 (TASK_QUEUE_KIND_STICKY): a workflow task sent to one worker's cache. */
const isSticky = (kind: number | string | undefined) => kind === 2 || kind === 'TASK_QUEUE_KIND_STICKY';

function describe(field: string, attrs: Attributes | undefined): string {
  const kind = field.replace('EventAttributes', '');
  const parts = [kind];
  const name =
    attrs?.activityType?.name ?? attrs?.signalName ?? attrs?.markerName ?? attrs?.acceptedRequest?.input?.name;
  if (name) parts.push(name);
  if (kind === 'workflowTaskScheduled' && isSticky(attrs?.taskQueue?.kind)) parts.push('(sticky queue)');
  if (kind === 'activityTaskStarted' && attrs?.attempt !== undefined) parts.push(`attempt ${attrs.attempt}`);
  if ((kind === 'workflowTaskStarted' || kind === 'activityTaskStarted') && attrs?.identity) {
    parts.push(`by ${attrs.identity}`);
  }
  return parts.join(' ');
}

type Timestamp = { seconds?: unknown; nanos?: unknown } | null | undefined;

/** A protobuf timestamp as epoch milliseconds (the clock Date.now() gives on the same machine). */
export const epochMs = (t: Timestamp): number | undefined =>
  t ? Number(t.seconds ?? 0) * 1000 + Math.floor(Number(t.nanos ?? 0) / 1e6) : undefined;

export async function eventsOf(client: Client, workflowId: string, who: string): Promise<TimedEvent[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const ms = epochMs(e.eventTime) ?? 0;
    const field = Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? '';
    return { ms, who, what: describe(field, (e as Record<string, Attributes>)[field]) };
  });
}

/**
 * Prints events in time order, in ms from `zeroMs`. Events before `zeroMs` (an operation's untimed
 * preparation) are counted, not listed.
 */
export function printTimeline(
  events: TimedEvent[],
  zeroMs: number,
  write: (line: string) => void,
  options: { alsoBefore?: (e: TimedEvent) => boolean } = {},
): void {
  const sorted = [...events].sort((a, b) => a.ms - b.ms);
  const shown = sorted.filter((e) => e.ms >= zeroMs || options.alsoBefore?.(e));
  if (sorted.length > shown.length)
    write(`  (${sorted.length - shown.length} earlier events of the preparation not shown)`);
  const width = Math.max(6, ...sorted.map((e) => e.who.length));
  for (const e of shown)
    write(`${String(Math.round(e.ms - zeroMs)).padStart(6)} ms  ${e.who.padEnd(width)}  ${e.what}`);
}
