import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChaosArgs } from '../../scripts/chaos/args';
import { FAULT_KINDS, REFUSED, killsWorker, parseFaultKinds, type FaultKind } from '../../scripts/chaos/faults';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import { formatTable, gotItsKill, summarize, toJson, type ChaosReport } from '../../scripts/chaos/report';
import type { IterationResult, Variant } from '../../scripts/chaos/types';

const SUPPORTED = FAULT_KINDS.filter((k) => !REFUSED[k]);
const renewal = scenarioByName('renewal')!;

function result(index: number, variant: Variant, duplicates = 0): IterationResult {
  const plan = planIteration(7, index, renewal, { restartRate: 0, faults: SUPPORTED });
  const kind = plan.fault!.kind;
  return {
    index,
    scenario: 'renewal',
    variant,
    eventId: `e${index}`,
    taskQueue: `q${index}`,
    plan,
    ...(killsWorker(kind)
      ? { crash: { mode: plan.crash.mode, pid: 1, signal: 'SIGKILL' as const, pointReached: true, atMs: 10 } }
      : { fault: { kind, injected: true, atMs: 10 } }),
    tally: {
      outcome: 'renewed',
      expectedEffects: 3,
      actualEffects: 3 + duplicates,
      duplicates,
      lost: 0,
      unknown: 0,
      needsReview: 0,
      unexplained: [],
    },
    durationMs: 1,
    timeline: {},
  };
}

describe('chaos --faults', () => {
  it('takes a list or all; refuses the kinds it cannot inject, saying what they lack', () => {
    assert.deepEqual(parseFaultKinds(['all']), SUPPORTED);
    assert.deepEqual(parseFaultKinds(['worker-pause,provider-reset', 'worker-pause']), [
      'worker-pause',
      'provider-reset',
    ]);
    assert.throws(() => parseFaultKinds(['ledger-partition']), /ledger-partition is not supported: .*PostgreSQL/);
    assert.throws(() => parseFaultKinds(['clock-skew']), /clock-skew is not supported: .*libfaketime/);
    assert.throws(() => parseFaultKinds(['cosmic-ray']), /unknown fault kind "cosmic-ray"/);
    assert.deepEqual(parseChaosArgs(['--faults', 'all']).faults, SUPPORTED);
    assert.equal(parseChaosArgs([]).faults, undefined);
    assert.throws(() => parseChaosArgs(['--faults', 'all', '--restart-rate', '0.5']), /server-restart kind/);
  });

  it('draws one kind an iteration from the seed, every kind over a few hundred, the same on every replay', () => {
    const plans = Array.from({ length: 300 }, (_, i) =>
      planIteration(7, i, renewal, { restartRate: 0, faults: SUPPORTED }),
    );
    const counts = new Map<FaultKind, number>();
    for (const p of plans) counts.set(p.fault!.kind, (counts.get(p.fault!.kind) ?? 0) + 1);
    for (const kind of SUPPORTED) assert.ok((counts.get(kind) ?? 0) >= 25, `${kind}: ${counts.get(kind)}`);
    assert.deepEqual(planIteration(7, 12, renewal, { restartRate: 0, faults: SUPPORTED }), plans[12]);
  });

  it('keeps the plan as drawn for a worker-kill, and replaces its crash with a held reply for the others', () => {
    for (let i = 0; i < 60; i++) {
      const bare = planIteration(7, i, renewal, { restartRate: 0 });
      const withFault = planIteration(7, i, renewal, { restartRate: 0, faults: SUPPORTED });
      const { fault, ...rest } = withFault;
      if (fault!.kind === 'worker-kill') {
        assert.deepEqual(rest, bare);
        continue;
      }
      assert.deepEqual(
        withFault.faults.map((f) => f.kind),
        ['hold-after-commit'],
      );
      assert.equal(withFault.declined, false);
      assert.equal(withFault.serverRestart, fault!.kind === 'server-restart');
      if (fault!.kind === 'worker-pause') assert.ok(fault!.durationMs! > 65_000, 'past the 65 s lease');
    }
  });

  it('counts by fault kind, in the table and in --json, with the baseline beside', () => {
    const retrysafe = Array.from({ length: 24 }, (_, i) => result(i, 'retrysafe'));
    const baseline = Array.from({ length: 24 }, (_, i) => result(i, 'baseline', i % 2));
    assert.ok(retrysafe.every(gotItsKill), 'an injected fault counts as the iteration’s fault');
    const report = {
      seed: 7,
      target: 'dev-server',
      crashesRequested: 24,
      concurrency: 4,
      durationMs: 1,
      serverRestarts: 0,
      workersReplacedAfterRestart: 0,
      retrysafe: summarize(retrysafe),
      baseline: summarize(baseline),
      failures: [],
      rerun: 'npm run chaos -- --seed 7',
      logDir: '.out/chaos/x',
      iterations: [...retrysafe, ...baseline],
    } satisfies ChaosReport;
    const json = toJson(report);
    const total = Object.values(json.byFault!).reduce((n, k) => n + k.iterations, 0);
    assert.equal(total, 24);
    assert.deepEqual(Object.keys(json.byFault!).sort(), [...new Set(retrysafe.map((r) => r.plan.fault!.kind))].sort());
    const baselineDup = Object.values(json.baseline!.byFault).reduce((n, k) => n + k.duplicates, 0);
    assert.equal(baselineDup, 12);
    assert.match(
      formatTable(report),
      /^fault +iterations +dup +lost +unexplained +baseline iterations +baseline dup$/m,
    );
  });
});
