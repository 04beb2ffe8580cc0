import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { recordedRun } from '../../client/recorded-acts';
import { sweepRows, type RowSweepDeps } from '../../workers/row-sweeper';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { acmeCharge } from '../support/intents';
import { countForKey } from '../support/ledger';
import { uniqueEvent } from '../support/renewal-input';

/**
 * Rows a run's act left behind when the run itself ended: the sweeper fails a row that says nothing was sent, hands a
 * row that may have been sent to its action workflow (with the intent from the run's history), which takes it over
 * and reconciles, and raises one alarm for a row whose intent nothing holds any more. Charges counted at the provider.
 */
describe('the sweeper: rows left by runs that ended', () => {
  let stack: Stack;
  let dir: string;
  let deps: RowSweepDeps;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-sweeper-'));
    stack = await startStack({ providerKinds: ['payments'], ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}` });
    await stack.startWorker();
    deps = { ledger: stack.ledger!, client: stack.client, taskQueue: stack.taskQueue, tools: stack.retrysafe.tools };
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const past = () => new Date(Date.now() - 1_000).toISOString();

  /** A row as a run's act leaves it when its worker and its run are gone: held, the lease over. */
  async function leftRow(eventId: string, status: 'planned' | 'dispatching') {
    const owner = runWorkflowId('acme', eventId);
    const key = actionKeyForStep(owner, { operation: 'charge', version: 1 });
    const registry = stack.retrysafe.tools;
    const intent = registry.parseIntent(acmeCharge(eventId, 1_990));
    const holder = `run:${owner}/tok#1`;
    const at = new Date().toISOString();
    const claim = { key, tenant: 'acme', operation: 'charge', toolVersion: 1, requestHash: registry.hash(intent) };
    await stack.ledger!.claimRow({ ...claim, owner, claimedAt: at, holder, leaseUntil: past() });
    await stack.ledger!.recordStatus({ key, seq: 0, status: 'planned', at, reason: 'claimed', holder });
    if (status === 'dispatching') {
      await stack.ledger!.recordStatus({ key, seq: 1, status, at, reason: 'dispatch', holder });
    }
    return key;
  }

  it('fails a row its run left planned: nothing was sent, nothing is', async () => {
    const key = await leftRow(uniqueEvent('sweep-planned'), 'planned');
    const sweep = await sweepRows(deps);
    assert.ok(sweep.failed.includes(key), JSON.stringify(sweep));
    const row = await stack.ledger!.get(key);
    assert.deepEqual([row?.status, row?.holder], ['failed', 'sweeper']);
    assert.match(row?.outcome ?? '', /nothing was sent/);
    assert.equal(countForKey(await stack.providers.payments.ledger(), key).records, 0);
    assert.ok(!(await sweepRows(deps)).failed.includes(key), 'a settled row is left alone');
  });

  it('raises one alarm for a row that may have been sent when nothing holds its intent any more', async () => {
    const key = await leftRow(uniqueEvent('sweep-abandoned'), 'dispatching');
    assert.ok((await sweepRows(deps)).abandoned.includes(key));
    assert.ok(!(await sweepRows(deps)).abandoned.includes(key), 'once');
    const alarms = await stack.ledger!.alarms({ key });
    assert.deepEqual(
      alarms.map((a) => a.kind),
      ['abandoned'],
    );
    assert.match(alarms[0].detail, /gone, with its history/);
    assert.equal((await stack.ledger!.get(key))?.status, 'dispatching', 'a person settles it; nothing guessed');
  });

  it('raises an alarm for a row its run left dispatching when terminated while its act ran: nothing guessed', async () => {
    const eventId = uniqueEvent('sweep-dispatching');
    const runId = runWorkflowId('acme', eventId);
    const key = actionKeyForStep(runId, { operation: 'charge', version: 1 });
    const { operation: _op, ...input } = acmeCharge(eventId, 1_990);
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'delay', delayMs: 3_000, times: 1 }]);
    const run = await stack.client.workflow.start(retrysafeChargeWorkflow, {
      workflowId: runId,
      taskQueue: stack.taskQueue,
      args: [input],
    });
    for (let i = 0; (await stack.ledger!.get(key))?.status !== 'dispatching'; i++) {
      assert.ok(i < 400, 'the run never put dispatching on record');
      await sleep(25);
    }
    // The run ends and its act's worker dies while the provider works on the charge. The act ran as a local activity
    // in the run's workflow task, which never completed: the history holds neither the act nor its prepared intent.
    await run.terminate('operator ended the run');
    await stack.workers[0].kill('SIGKILL');
    await stack.startWorker();
    assert.deepEqual(await recordedRun(stack.client, runId), { acts: [], prepared: [] });
    // The act's lease ends (65 s in production; ended here at once, holder unchanged).
    const row = (await stack.ledger!.get(key))!;
    assert.ok(await stack.ledger!.takeOver(key, row.epoch, row.holder!, past()));

    const sweep = await sweepRows(deps);
    assert.ok(sweep.abandoned.includes(key), JSON.stringify(sweep));
    const alarms = await stack.ledger!.alarms({ key });
    assert.match(alarms[0]?.detail ?? '', /neither the act nor its intent .* ask the provider/);
    assert.equal((await stack.ledger!.get(key))?.status, 'dispatching', 'a person settles it; nothing resent');
    assert.ok(countForKey(await stack.providers.payments.ledger(), key).committed <= 1);
  });
});
