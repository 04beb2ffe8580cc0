import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatClusterKills,
  formatTable,
  gotItsKill,
  isFailure,
  summarize,
  summarizeClusterKills,
  toJson,
  type ChaosReport,
} from '../../scripts/chaos/report';
import type { IterationResult, Tally, Variant } from '../../scripts/chaos/types';
import { chaosResult } from '../support/chaos-result';

function result(
  index: number,
  variant: Variant,
  tally: Partial<Tally>,
  signal: NodeJS.Signals | null = 'SIGKILL',
): IterationResult {
  return chaosResult(index, variant, tally, { signal });
}

describe('chaos report', () => {
  const clean = [0, 1, 2].map((i) => result(i, 'retrysafe', {}));
  const baseline = [result(0, 'baseline', { expectedEffects: 1, actualEffects: 2, duplicates: 1 })];

  it('counts real SIGKILLs, effects and findings per scenario and crash mode', () => {
    const { totals, scenarios } = summarize([...clean, result(3, 'retrysafe', { unexplained: ['x', 'y'] }, null)]);
    assert.equal(totals.iterations, 4);
    assert.equal(totals.crashes, 3, 'an exit without SIGKILL is not a crash');
    assert.equal(totals.expectedEffects, 12);
    assert.equal(totals.unexplained, 2);
    assert.deepEqual(scenarios.renewal, totals);
    const modes = Object.values(totals.byMode).reduce((n, m) => n + m.iterations, 0);
    assert.equal(modes, 4);
  });

  it('flags duplicates, lost effects, unexplained findings and missing SIGKILLs as failures', () => {
    assert.equal(isFailure(clean[0]), false);
    assert.equal(isFailure(result(0, 'retrysafe', { duplicates: 1 })), true);
    assert.equal(isFailure(result(0, 'retrysafe', { lost: 1 })), true);
    assert.equal(isFailure(result(0, 'retrysafe', { unexplained: ['run ended failed'] })), true);
    assert.equal(isFailure(result(0, 'retrysafe', {}, null)), true);
  });

  it('prints retrysafe and baseline side by side and puts the headline numbers first in JSON', () => {
    const report: ChaosReport = {
      seed: 1,
      target: 'dev-server',
      crashesRequested: 3,
      concurrency: 2,
      durationMs: 1000,
      serverRestarts: 1,
      workersReplacedAfterRestart: 0,
      retrysafe: summarize(clean),
      baseline: summarize(baseline),
      failures: [],
      rerun: 'npm run chaos -- --seed 1',
      logDir: '.out/chaos/x',
      iterations: [...clean, ...baseline],
    };
    const table = formatTable(report).split('\n');
    assert.match(table[0], /^scenario\s+variant\s+crashes/);
    assert.match(table[1], /^renewal\s+retrysafe\s+3\s/);
    assert.match(table[2], /^renewal\s+baseline\s+1\s.*\s1\s/);
    assert.match(table[3], /baseline duplicates by crash mode/);
    const json = toJson(report);
    assert.deepEqual(Object.keys(json).slice(0, 5), ['seed', 'crashes', 'crashesRequested', 'duplicates', 'lost']);
    assert.equal(json.unexplained, 0);
    assert.equal(json.baseline?.duplicates, 1);
    assert.ok(json.scenarios.renewal);
  });

  it('counts a spared worker as killed only when the cluster kill at its point happened, and sums kills per service', () => {
    const spared = (recoveryMs: number, error?: string): IterationResult => {
      const r = result(10, 'retrysafe', {}, null);
      r.crash = { ...r.crash!, workerSpared: true };
      r.clusterFault = {
        target: 'history',
        spareWorker: true,
        signal: 'SIGKILL',
        atMs: 5,
        downMs: 500,
        recoveryMs,
        ...(error ? { error } : {}),
      };
      return r;
    };
    const withWorker = result(11, 'retrysafe', { duplicates: 1 });
    withWorker.clusterFault = {
      target: 'postgres',
      spareWorker: false,
      signal: null,
      atMs: 5,
      downMs: 900,
      recoveryMs: 700,
    };
    assert.equal(gotItsKill(spared(800)), true);
    assert.equal(isFailure(spared(800)), false);
    assert.equal(gotItsKill(spared(0, 'the history service was not running')), false);
    assert.equal(isFailure(spared(0, 'boom')), true);

    const kills = summarizeClusterKills([spared(800), spared(1200), spared(0, 'boom'), withWorker]);
    const history = kills.find((k) => k.target === 'history')!;
    assert.deepEqual(
      { kills: history.kills, withWorker: history.withWorker, failed: history.failed, max: history.recoveryMs.max },
      { kills: 3, withWorker: 0, failed: 1, max: 1200 },
    );
    const postgres = kills.find((k) => k.target === 'postgres')!;
    assert.deepEqual([postgres.kills, postgres.withWorker, postgres.duplicates], [1, 1, 1]);
    assert.equal(kills.find((k) => k.target === 'frontend')!.kills, 0);
    assert.match(
      formatClusterKills(kills),
      /history\s+3 kills \(0 with the worker\), 1 failed · back serving in median 800 ms, p90 1200 ms/,
    );
  });
});
