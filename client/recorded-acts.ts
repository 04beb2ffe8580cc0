import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ActOnRecordInput, ActOnRecordResult } from '../activities/act-on-record';
import type { PreparedAction } from '../activities/prepare-action';
import type { PrepareAndActResult } from '../activities/prepare-and-act';
import type { ActionSnapshot } from '../messages/action';
import { SA_ACTION_KEYS } from '../policies/search-attributes';

/** One `actOnRecord` of a run, as its history holds it. */
export interface RecordedAct {
  /**
   * What it was scheduled with, for an act that ran as an activity (a tool with `longCalls`). A local activity's input
   * is not recorded; its intent is among the run's `prepared` ones.
   */
  input?: ActOnRecordInput;
  /** Absent while it runs, or when it failed. */
  result?: ActOnRecordResult;
}

/** What a run's history holds of its actions. */
export interface RunRecord {
  /** Its acts on ledger rows, oldest first. */
  acts: RecordedAct[];
  /** The intents it prepared (normalized, with their request hashes), oldest first: `prepareAction`'s and `prepareAndAct`'s. */
  prepared: PreparedAction[];
}

/** The marker a local activity's result is recorded in (Temporal's core SDK names it so). */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/**
 * The acts a run scheduled on the record-first path (one per action it acted on the ledger row) and the intents it
 * prepared, read from its history and decoded with the client's data converter (payload keys included). Empty when
 * the run is gone.
 */
export async function recordedRun(client: Client, runId: string): Promise<RunRecord> {
  const out: RunRecord = { acts: [], prepared: [] };
  let history;
  try {
    history = await client.workflow.getHandle(runId).fetchHistory();
  } catch {
    return out;
  }
  const converter = client.options.loadedDataConverter;
  const byScheduledId = new Map<string, RecordedAct>();
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'actOnRecord') {
      const input = await decodeFromPayloadsAtIndex<ActOnRecordInput>(converter, 0, scheduled.input?.payloads);
      const act = { input };
      byScheduledId.set(String(event.eventId), act);
      out.acts.push(act);
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const act = completed ? byScheduledId.get(String(completed.scheduledEventId)) : undefined;
    if (act && completed) {
      act.result = await decodeFromPayloadsAtIndex<ActOnRecordResult>(converter, 0, completed.result?.payloads);
      continue;
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) continue;
    const type = localActivityType(marker.details?.data?.payloads?.[0]?.data);
    const result = marker.details?.result?.payloads;
    if (!result?.length) continue;
    if (type === 'actOnRecord') {
      out.acts.push({ result: await decodeFromPayloadsAtIndex<ActOnRecordResult>(converter, 0, result) });
    } else if (type === 'prepareAction') {
      out.prepared.push(await decodeFromPayloadsAtIndex<PreparedAction>(converter, 0, result));
    } else if (type === 'prepareAndAct') {
      const both = await decodeFromPayloadsAtIndex<PrepareAndActResult>(converter, 0, result);
      out.prepared.push(both.prepared);
      if (both.acted) out.acts.push({ result: both.acted.verdict });
    }
  }
  return out;
}

/** The acts alone (see `recordedRun`). */
export async function recordedActs(client: Client, runId: string): Promise<RecordedAct[]> {
  return (await recordedRun(client, runId)).acts;
}

/** The activity type a local activity marker names: its `data` is plain JSON written by the SDK's core. */
function localActivityType(data: Uint8Array | null | undefined): string | undefined {
  if (!data) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as {
      activity_type?: unknown;
      activityType?: unknown;
    };
    const type = parsed.activity_type ?? parsed.activityType;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The snapshot of an action a run acted on itself (no action workflow), from the newest act that settled it: with
 * the requests it sent and what the provider answered. `runId` when known (the ledger row's owner); otherwise the
 * runs that carry the key in their RetrysafeActionKeys are asked, newest first.
 */
export async function snapshotFromRun(
  client: Client,
  key: string,
  runId?: string,
): Promise<ActionSnapshot | undefined> {
  const runs = runId ? [runId] : await runsWithKey(client, key);
  for (const run of runs) {
    // Only an act that settled the row itself (it says as which holder); one that handed over left a workflow.
    const settled = (await recordedActs(client, run))
      .map((a) => a.result)
      .filter((r) => r !== undefined && 'snapshot' in r && r.holder !== undefined && r.snapshot.key === key)
      .at(-1);
    if (settled && 'snapshot' in settled) return settled.snapshot;
  }
  return undefined;
}

async function runsWithKey(client: Client, key: string): Promise<string[]> {
  const out: string[] = [];
  const query = `${SA_ACTION_KEYS.name} = '${key.replace(/'/g, "\\'")}'`;
  for await (const wf of client.workflow.list({ query })) {
    out.push(wf.workflowId);
    if (out.length >= 5) break;
  }
  return out;
}
