import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { historyCost, readHistoryEvents } from '../../scripts/bench/history-cost';

const FIXTURES = path.resolve(__dirname, '..', 'replay', 'histories');

describe('history cost: where an action’s time goes, from its history', () => {
  it('counts the recorded approved charge: its workflow tasks, activities, markers, signals and updates', async () => {
    // Recorded by 0.3.0: the action workflow waited for a signed approval, then its executor charged.
    const events = await readHistoryEvents(path.join(FIXTURES, 'charge-action-approved.v0-3-0.json'));
    const cost = historyCost(events);
    const ofType = (t: string) => events.filter((e) => e.eventType === `EVENT_TYPE_${t}`).length;
    assert.equal(cost.events, events.length);
    assert.equal(cost.workflowTasks, ofType('WORKFLOW_TASK_COMPLETED'));
    assert.ok(cost.workflowTasks >= 2, 'an action takes more than one workflow task');
    assert.deepEqual(cost.activities, { executeAction: 1 });
    const localActivityMarkers = events.filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length;
    assert.equal(cost.localActivities, localActivityMarkers);
    assert.ok(localActivityMarkers >= 2, 'the policy load and the ledger row');
    assert.equal(ofType('MARKER_RECORDED'), localActivityMarkers, 'no patch marker in a 0.3 action');
    assert.equal(cost.updates, ofType('WORKFLOW_EXECUTION_UPDATE_ACCEPTED'));
    assert.ok(cost.updates >= 2, 'the claim and the approval');
    assert.equal(cost.signalsReceived, ofType('WORKFLOW_EXECUTION_SIGNALED'));
    assert.equal(cost.signalsSent, ofType('SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED'));
    assert.ok(cost.wallMs > 0 && cost.workflowTaskRunMs > 0);
    assert.ok(cost.workflowTaskQueueMs + cost.workflowTaskRunMs <= cost.wallMs + 1, 'workflow tasks never overlap');
  });

  it('reads the CLI’s JSON as well, and names a file without events', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-history-'));
    try {
      const plain = path.join(dir, 'plain.json');
      await writeFile(
        plain,
        JSON.stringify({
          events: [
            { eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', eventTime: '2026-12-01T00:00:00.000Z' },
            {
              eventId: '2',
              eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
              eventTime: '2026-12-01T00:00:00.250Z',
            },
          ],
        }),
      );
      assert.equal(historyCost(await readHistoryEvents(plain)).wallMs, 250);
      const empty = path.join(dir, 'empty.json');
      await writeFile(empty, '{}');
      await assert.rejects(readHistoryEvents(empty), /empty\.json: no events/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
