import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { temporal } from '@temporalio/proto';
import { RECEIPT_PATCH } from '../../examples/workflows/renewal';
import { ACTION_WORKFLOW_TYPE } from '../../messages/action';
import { AGENT_RUN_WORKFLOW_TYPE } from '../../messages/run';
import { withEnginePreloads } from '../../workers/workflow-preload';

/**
 * Recorded histories of the demo scenarios (scripts/record-histories.ts) replayed against today's workflow
 * code. A change that would send a running workflow down another path fails here, in CI, instead of in
 * production; intended changes go behind patched() (see examples/workflows/renewal.ts, 'renewal-receipt-email').
 *
 * What must replay: the histories of this release (`*.v0-3-0.json`), and any recorded after a patched() change within
 * it. 0.3 registers the engine's workflows under new type names (actionWorkflowV3, agentRunWorkflowV3): 0.2's
 * histories are not replayed by 0.3's workers at all (docs/upgrading.md), so none of them is kept here.
 */
const HISTORIES = path.join(__dirname, 'histories');
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

interface RecordedHistory {
  name: string;
  workflowId: string;
  history: temporal.api.history.v1.History;
}

async function loadHistories(): Promise<RecordedHistory[]> {
  const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => {
      // Written by scripts/record-histories.ts: { workflowId, history } with the proto's toObject form.
      const recorded = JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8')) as {
        workflowId: string;
        history: object;
      };
      return {
        name: path.basename(file, '.json'),
        workflowId: recorded.workflowId,
        history: temporal.api.history.v1.History.fromObject(recorded.history),
      };
    }),
  );
}

async function replayAll(workflowsPath: string) {
  const histories = await loadHistories();
  // With the engine's preloads, as production workers replay: histories recorded before them must replay the same.
  const options: ReplayWorkerOptions = {
    workflowsPath,
    bundlerOptions: { ...withEnginePreloads(), logger: quiet } as never,
  };
  const results = [];
  // Recordings from before and after a patched change share workflow IDs: names are handed out in order.
  const names = new Map<string, string[]>();
  for (const h of histories) names.set(h.workflowId, [...(names.get(h.workflowId) ?? []), h.name]);
  for await (const result of Worker.runReplayHistories(
    options,
    histories.map(({ workflowId, history }) => ({ workflowId, history })),
  )) {
    results.push({ ...result, name: names.get(result.workflowId)?.shift() ?? result.workflowId });
  }
  return results;
}

/** The patch IDs a history recorded (core_patch markers), in order. */
function patchIds(history: temporal.api.history.v1.History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const payload =
      marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return payload ? [(JSON.parse(Buffer.from(payload).toString('utf8')) as { id: string }).id] : [];
  });
}

describe('replay of recorded histories', () => {
  it('replays every recorded history deterministically on the current workflow code', async () => {
    const histories = await loadHistories();
    assert.ok(histories.length >= 7, `expected recorded histories in ${HISTORIES}, found ${histories.length}`);
    const results = await replayAll(require.resolve('../../examples/workflows'));
    const failures = results.filter((r) => r.error).map((r) => `${r.name}: ${(r.error as Error).message}`);
    assert.deepEqual(failures, []);
    assert.equal(results.length, histories.length);
  });

  it("records 0.3's shapes under its versioned type names, and no engine patch marker", async () => {
    const histories = await loadHistories();
    const typeOf = (h: RecordedHistory) =>
      h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
    const engine = histories.filter((h) => /Workflow(V\d+)?$/.test(typeOf(h)) && !typeOf(h).startsWith('renewal'));
    const types = new Set(engine.map(typeOf));
    assert.ok(types.has(ACTION_WORKFLOW_TYPE) && types.has(AGENT_RUN_WORKFLOW_TYPE), [...types].join(', '));
    assert.ok(!types.has('actionWorkflow') && !types.has('agentRunWorkflow'), 'no 0.2 history is kept');
    for (const h of histories) {
      const engineMarkers = patchIds(h.history).filter((id) => id !== RECEIPT_PATCH);
      assert.deepEqual(engineMarkers, [], `${h.name} carries no engine patch marker`);
    }
    // The example renewal keeps its own patched() step: the tool for compatible changes within a release.
    const renewal = histories.find((h) => h.name.startsWith('renewal-renewed.'));
    assert.ok(renewal, 'a recording of a renewed run');
    assert.deepEqual(patchIds(renewal.history), [RECEIPT_PATCH]);
  });

  it('holds one path: runs act on the row; action workflows wait, take over, undo or wait for a person', async () => {
    const histories = await loadHistories();
    const byName = (name: string) => {
      const h = histories.find((x) => x.name === `${name}.v0-3-0`);
      assert.ok(h, `a recording named ${name}.v0-3-0`);
      return h.history.events ?? [];
    };
    const activities = (name: string) =>
      byName(name).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    // The run acts in its own workflow task: each action one local activity that prepares and acts (its marker names
    // it), no activity task, and no claim of an action workflow on the happy path.
    const localActivities = (name: string) =>
      byName(name).flatMap((e) => {
        const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
        const type = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }) : undefined;
        return type?.activity_type ?? [];
      });
    assert.deepEqual(activities('renewal-renewed'), []);
    assert.deepEqual(localActivities('renewal-renewed'), [
      'prepareAndAct',
      'prepareAndAct',
      'prepareAndAct',
      'prepareAndAct',
    ]);
    assert.ok(activities('renewal-compensated').includes('claimAction'), 'each undo has its workflow');
    assert.ok(activities('agent-run-done').includes('planNextAction'), 'the agent run plans through its activity');
    const localResults = (name: string) =>
      byName(name).flatMap((e) =>
        e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
          ? [Buffer.from(e.markerRecordedEventAttributes.details?.result?.payloads?.[0]?.data ?? []).toString('utf8')]
          : [],
      );
    assert.ok(localResults('charge-action-waited').some((r) => r.includes('"kind":"busy"')));
    assert.ok(localResults('receipt-action-taken-over').some((r) => r.includes('"kind":"handed-over"')));
    // Every action workflow's executor is the one activity, `executeAction`, handed the row's entry.
    for (const name of ['refund-action-undo', 'charge-action-approved']) {
      assert.deepEqual(
        activities(name).filter((a) => a.startsWith('execute')),
        ['executeAction'],
        name,
      );
    }
    const signals = histories.flatMap((h) =>
      (h.history.events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []),
    );
    assert.ok(!signals.includes('retrysafe.dispatchReport'), 'no owner reports a dispatch any more');
  });

  it('answers the approver in a task that runs no local activity and writes no marker', async () => {
    const h = (await loadHistories()).find((x) => x.name === 'charge-action-approved.v0-3-0');
    assert.ok(h, 'a recording of an approved charge');
    const events = h.history.events ?? [];
    const accepted = events.findIndex(
      (e, i) => e.workflowExecutionUpdateAcceptedEventAttributes && events[i + 1]?.timerCanceledEventAttributes,
    );
    const scheduled = events.findIndex((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(accepted > 0 && scheduled > accepted, 'an approval, then the executor');
    const task = events.slice(accepted, scheduled + 1);
    const markers = task.filter((e) => e.markerRecordedEventAttributes).length;
    assert.equal(markers, 0, 'no local activity and no patch marker in the task that takes the approval');
    const upserts = task.flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      return fields ? [Object.keys(fields).sort().join(',')] : [];
    });
    assert.deepEqual(upserts, ['RetrysafeKind,RetrysafeOperation,RetrysafeStatus,RetrysafeTenant']);
  });

  it('catches a change that is not behind patched() as a determinism violation', async () => {
    const results = await replayAll(require.resolve('./fixtures/unpatched-workflows'));
    const renewed = results.find((r) => r.name === 'renewal-renewed.v0-3-0');
    assert.ok(renewed?.error, 'the unpatched change must fail to replay the renewed history');
    assert.ok(renewed.error instanceof DeterminismViolationError, `got ${String(renewed.error)}`);
  });
});
