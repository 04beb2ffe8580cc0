import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runChaos } from '../../scripts/chaos/run';
import { CLUSTER_FAULT_TARGETS } from '../../scripts/chaos/types';

/**
 * `npm run chaos -- --target cluster` in short: four iterations, so each of history, matching, the frontend and
 * PostgreSQL is killed once at a crash point. Seed 13 kills the worker with three of them (in flight, before send,
 * after commit) and spares it once (matching, at a random time).
 */
const SEED = 13;
const SCENARIOS = ['renewal', 'saga-compensation'];

describe('chaos on the multi-service cluster', () => {
  it('kills each service and the database once with the work in flight and finds no duplicate and no lost effect', async () => {
    const progress: string[] = [];
    const report = await runChaos({
      target: 'cluster',
      crashes: 4,
      seed: SEED,
      scenarios: SCENARIOS,
      // One at a time, as the cluster target defaults to: every kill lands at its point.
      concurrency: 1,
      log: (line) => progress.push(line),
    });
    const why = `\n${progress.join('\n')}\n${JSON.stringify(report.failures, null, 2)}`;
    const t = report.retrysafe.totals;
    assert.equal(report.target, 'cluster');
    assert.equal(t.crashes, 4, `every iteration got its kill${why}`);
    assert.equal(t.duplicates, 0, why);
    assert.equal(t.lost, 0, why);
    assert.equal(t.unexplained, 0, why);
    assert.equal(t.expectedEffects, t.actualEffects, why);
    assert.equal(report.serverRestarts, 0, 'no whole-server restarts on the cluster unless asked');
    assert.deepEqual(
      report.cluster?.map((k) => [k.target, k.kills, k.failed]),
      CLUSTER_FAULT_TARGETS.map((target) => [target, 1, 0]),
      why,
    );
    const spared = report.iterations.filter((r) => r.crash?.workerSpared);
    assert.deepEqual(
      spared.map((r) => r.clusterFault?.target),
      ['matching'],
      `one worker lived through its service's kill${why}`,
    );
    for (const r of report.iterations) {
      assert.ok(r.clusterFault && r.clusterFault.recoveryMs > 0, `recovery measured for #${r.index}${why}`);
      if (r.clusterFault.target !== 'postgres') assert.equal(r.clusterFault.signal, 'SIGKILL');
    }
  });
});
