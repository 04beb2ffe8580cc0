import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ActOnRecordInput, ActOnRecordResult } from '../activities/act-on-record';
import type { ActionSnapshot } from '../messages/action';
import { SA_ACTION_KEYS } from '../policies/search-attributes';

/** One `actOnRecord` activity of a run, as its history holds it: what it was scheduled with, and its result. */
export interface RecordedAct {
  input: ActOnRecordInput;
  /** Absent while it runs, or when it failed. */
  result?: ActOnRecordResult;
}

/**
 * The acts a run scheduled on the record-first path (one per action it acted on the ledger row), read from its
 * history and decoded with the client's data converter (payload keys included). Empty when the run is gone.
 */
export async function recordedActs(client: Client, runId: string): Promise<RecordedAct[]> {
  let history;
  try {
    history = await client.workflow.getHandle(runId).fetchHistory();
  } catch {
    return [];
  }
  const converter = client.options.loadedDataConverter;
  const byScheduledId = new Map<string, RecordedAct>();
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'actOnRecord') {
      const input = await decodeFromPayloadsAtIndex<ActOnRecordInput>(converter, 0, scheduled.input?.payloads);
      byScheduledId.set(String(event.eventId), { input });
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const act = completed ? byScheduledId.get(String(completed.scheduledEventId)) : undefined;
    if (act && completed) {
      act.result = await decodeFromPayloadsAtIndex<ActOnRecordResult>(converter, 0, completed.result?.payloads);
    }
  }
  return [...byScheduledId.values()];
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
    const acts = (await recordedActs(client, run)).filter((a) => a.result?.holder && a.result.snapshot.key === key);
    const settled = acts.at(-1)?.result?.snapshot;
    if (settled) return settled;
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
