import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { temporal } from '@temporalio/proto';
import { RECEIPT_PATCH } from '../../examples/workflows/renewal';
import { CLAIM_AS_ACTIVITY_PATCH, OWNER_SENDS_PATCH } from '../../workflows/action-run';
import { CURRENT_CLAIM_ANSWERS_PATCH, LEDGER_IN_WORKER_PATCH } from '../../workflows/action';
import { SEND_CHECKS_IN_EXECUTOR_PATCH } from '../../workflows/action/context';
import { withEnginePreloads } from '../../workers/workflow-preload';

/**
 * Recorded histories of the demo scenarios (scripts/record-histories.ts) replayed against today's workflow
 * code. A change that would send a running workflow down another path fails here, in CI, instead of in
 * production; intended changes go behind patched() (see examples/workflows/renewal.ts, 'renewal-receipt-email').
 *
 * What must replay: every release's histories (`*.v0-2-0.json`, recorded by 0.2.0), the record-first shape
 * (`*.record-first.json`), the action workflow that hands its pre-send checks to the executor
 * (`*.send-checks-in-executor.json`) and the same with that patch's marker recorded before the wait for a person
 * (`*.marker-before-wait.json`), and the recordings between them that still do (`*.owner-sends.json`). Paths only
 * histories from before 0.2.0 took (a claim as a local activity, a run's claim without the send, an action workflow
 * without the ledger-in-worker and current-claim-answers patches) were removed with deprecatePatch().
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
    assert.ok(histories.length >= 4, `expected recorded histories in ${HISTORIES}, found ${histories.length}`);
    const results = await replayAll(require.resolve('../../examples/workflows'));
    const failures = results.filter((r) => r.error).map((r) => `${r.name}: ${(r.error as Error).message}`);
    assert.deepEqual(failures, []);
    assert.equal(results.length, histories.length);
  });

  it('records the receipt step behind its patch, so runs from before it keep replaying', async () => {
    const renewal = (await loadHistories()).find((h) => h.name === 'renewal-renewed.v0-2-0');
    assert.ok(renewal, 'a recording of a renewed run');
    assert.deepEqual(patchIds(renewal.history), [OWNER_SENDS_PATCH, RECEIPT_PATCH]);
  });

  it('holds recordings of 0.2.0: runs claim and send, their undos claim, action workflows carry both patches', async () => {
    const histories = await loadHistories();
    const byName = (name: string) => {
      const h = histories.find((x) => x.name === name);
      assert.ok(h, `a recording named ${name}`);
      return h.history;
    };
    assert.deepEqual(patchIds(byName('renewal-compensated.v0-2-0')), [OWNER_SENDS_PATCH, CLAIM_AS_ACTIVITY_PATCH]);
    for (const name of ['charge-action-confirmed.v0-2-0', 'charge-action-compensated.v0-2-0']) {
      assert.deepEqual(patchIds(byName(name)), [LEDGER_IN_WORKER_PATCH, CURRENT_CLAIM_ANSWERS_PATCH], name);
    }
    const signals = (byName('charge-action-confirmed.v0-2-0').events ?? []).map(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName,
    );
    assert.ok(signals.includes('retrysafe.dispatchReport'), 'the charge was reported by its owner');
  });

  it('holds recordings of the record-first path: runs act on the row, action workflows wait or take over', async () => {
    const histories = await loadHistories();
    const byName = (name: string) => {
      const h = histories.find((x) => x.name === name);
      assert.ok(h, `a recording named ${name}`);
      return h.history.events ?? [];
    };
    const activities = (name: string) =>
      byName(name).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    // The run's actions are activities of its own; no claim of an action workflow on the happy path.
    assert.deepEqual(activities('renewal-renewed.record-first'), [
      'actOnRecord',
      'actOnRecord',
      'actOnRecord',
      'actOnRecord',
    ]);
    assert.ok(activities('renewal-compensated.record-first').includes('claimAction'), 'each undo has its workflow');
    // The action workflows that still run: one waited for the row while the run's act held it, one took it over.
    const localResults = (name: string) =>
      byName(name).flatMap((e) =>
        e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
          ? [Buffer.from(e.markerRecordedEventAttributes.details?.result?.payloads?.[0]?.data ?? []).toString('utf8')]
          : [],
      );
    assert.ok(localResults('charge-action-waited.record-first').some((r) => r.includes('"kind":"busy"')));
    assert.ok(localResults('receipt-action-taken-over.record-first').some((r) => r.includes('"kind":"handed-over"')));
  });

  it('holds an approved action of each shape: checks in the workflow task, in the executor, its marker before the wait', async () => {
    const histories = await loadHistories();
    /** The events of the workflow task that took the approval: from its update's acceptance to the executor. */
    const approvalTask = (name: string) => {
      const h = histories.find((x) => x.name === name);
      assert.ok(h, `a recording named ${name}`);
      const events = h.history.events ?? [];
      const accepted = events.findIndex(
        (e, i) => e.workflowExecutionUpdateAcceptedEventAttributes && events[i + 1]?.timerCanceledEventAttributes,
      );
      const scheduled = events.findIndex((e) => e.activityTaskScheduledEventAttributes);
      assert.ok(accepted > 0 && scheduled > accepted, `${name}: an approval, then the executor`);
      const executor = events[scheduled].activityTaskScheduledEventAttributes?.activityType?.name;
      return { patches: patchIds(h.history), task: events.slice(accepted, scheduled + 1), executor };
    };
    const markers = (task: temporal.api.history.v1.IHistoryEvent[], name: string) =>
      task.filter((e) => e.markerRecordedEventAttributes?.markerName === name).length;
    const localActivities = (task: temporal.api.history.v1.IHistoryEvent[]) => markers(task, 'core_local_activity');
    /** The search attributes each upsert of the task set: the SDK upserts TemporalChangeVersion with a patch. */
    const upserts = (task: temporal.api.history.v1.IHistoryEvent[]) =>
      task.flatMap((e) => {
        const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
        return fields ? [Object.keys(fields).sort().join(',')] : [];
      });
    const before = approvalTask('charge-action-approved.record-first');
    assert.equal(before.patches.includes(SEND_CHECKS_IN_EXECUTOR_PATCH), false);
    assert.equal(localActivities(before.task), 2, 'the trust re-read and the ledger write, in the workflow task');
    const now = approvalTask('charge-action-approved.send-checks-in-executor');
    assert.ok(now.patches.includes(SEND_CHECKS_IN_EXECUTOR_PATCH));
    assert.equal(localActivities(now.task), 0, 'the approver is answered without a local activity');
    assert.equal(markers(now.task, 'core_patch'), 1, 'this recording took the patch in the approval task');
    assert.equal(upserts(now.task).filter((u) => u.includes('TemporalChangeVersion')).length, 1);
    // The same path with the patch taken before the wait: the approval's task holds one upsert, the status.
    const current = approvalTask('charge-action-approved.marker-before-wait');
    assert.ok(current.patches.includes(SEND_CHECKS_IN_EXECUTOR_PATCH));
    assert.equal(localActivities(current.task), 0);
    assert.equal(markers(current.task, 'core_patch'), 0, 'no patch marker in the task that takes the approval');
    assert.deepEqual(upserts(current.task), ['RetrysafeKind,RetrysafeOperation,RetrysafeStatus,RetrysafeTenant']);
    // Under a name workers of earlier versions do not register: none of them can send without the checks.
    assert.deepEqual(
      [before.executor, now.executor, current.executor],
      ['executeAction', 'executeRecordedAction', 'executeRecordedAction'],
    );
  });

  it('catches a change that is not behind patched() as a determinism violation', async () => {
    const results = await replayAll(require.resolve('./fixtures/unpatched-workflows'));
    const renewed = results.find((r) => r.name === 'renewal-renewed.v0-2-0');
    assert.ok(renewed?.error, 'the unpatched change must fail to replay the renewed history');
    assert.ok(renewed.error instanceof DeterminismViolationError, `got ${String(renewed.error)}`);
  });
});
