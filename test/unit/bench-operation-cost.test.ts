import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { historyCost, readHistoryEvents } from '../../scripts/bench/history-cost';
import { formatOperationCost, totalOf } from '../../scripts/bench/operation-cost';
import { historyAsJson } from '../../scripts/lib/history-json';

const FIXTURES = path.resolve(__dirname, '..', 'replay', 'histories');
const CHARGE = path.join(FIXTURES, 'charge-action-approved.v0-3-0.json');

describe('bench: what one operation cost, from the histories of its workflows', () => {
  it('reads a fetched history (enum numbers, long timestamps) the way it reads the CLI’s JSON', async () => {
    const raw = JSON.parse(await readFile(CHARGE, 'utf8')) as { history: unknown };
    // What client.workflow.getHandle(id).fetchHistory() returns: the decoded proto, not its JSON form.
    const fetched = temporal.api.history.v1.History.fromObject(raw.history as never);
    assert.equal(typeof fetched.events[0].eventType, 'number', 'the decoded form carries enum numbers');
    const fromFetched = historyCost(historyAsJson(fetched).events as Parameters<typeof historyCost>[0]);
    const fromFile = historyCost(await readHistoryEvents(CHARGE));
    assert.deepEqual(fromFetched, fromFile);
    assert.ok(fromFetched.workflowTasks >= 2);
  });

  it('sums the workflows of an operation, counting a signal once (where it is received)', async () => {
    const action = historyCost(await readHistoryEvents(CHARGE));
    const run = historyCost(await readHistoryEvents(path.join(FIXTURES, 'renewal-renewed.v0-3-0.json')));
    const total = totalOf([run, action]);
    assert.equal(total.events, run.events + action.events);
    assert.equal(total.workflowTasks, run.workflowTasks + action.workflowTasks);
    assert.equal(total.localActivities, run.localActivities + action.localActivities);
    assert.equal(total.signals, run.signalsReceived + action.signalsReceived);
    assert.equal(total.updates, run.updates + action.updates);
    assert.equal(
      total.activities,
      [run, action].flatMap((c) => Object.values(c.activities)).reduce((n, k) => n + k, 0),
    );
    const line = formatOperationCost({
      workflows: [
        { role: 'run', workflowId: 'run:t:e', cost: run },
        { role: 'action', workflowId: 'a', cost: action },
      ],
      ...total,
    });
    assert.match(line, new RegExp(`^${total.events} events, ${total.workflowTasks} workflow tasks`));
    assert.match(
      line,
      new RegExp(`run ${run.events} events / ${run.workflowTasks} tasks; action ${action.events} events`),
    );
  });
});
