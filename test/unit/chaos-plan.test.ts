import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exampleRegistry } from '../../examples/tools';
import { crashSpecFor } from '../../scripts/chaos/crash';
import { describePlan, planIteration } from '../../scripts/chaos/plan';
import { SCENARIOS, scenarioByName } from '../../scripts/chaos/registry';
import { CLUSTER_FAULT_TARGETS, type IterationPlan } from '../../scripts/chaos/types';

const tools = exampleRegistry();
const SEED = 20260828;
const plansFor = (name: string, n = 400): IterationPlan[] =>
  Array.from({ length: n }, (_, i) => planIteration(SEED, i, scenarioByName(name)!, { restartRate: 0.1 }));

describe('chaos iteration plans', () => {
  it('depend only on seed and index, so one iteration can be replayed alone', () => {
    const renewal = scenarioByName('renewal')!;
    assert.deepEqual(planIteration(SEED, 17, renewal, { restartRate: 0.1 }), plansFor('renewal', 18)[17]);
    assert.notDeepEqual(planIteration(SEED + 1, 17, renewal, { restartRate: 0.1 }), plansFor('renewal', 18)[17]);
  });

  for (const scenario of SCENARIOS) {
    it(`keep every crash mode meaningful for ${scenario.name}`, () => {
      const plans = plansFor(scenario.name);
      const contract = scenario.realServer?.tool ?? tools.get(scenario.operation);
      const modes = new Set(plans.map((p) => p.crash.mode));
      for (const [mode] of scenario.modes) {
        if (mode !== 'before-lookup' || contract.dedupe === 'lookup') assert.ok(modes.has(mode), `${mode} is drawn`);
      }
      for (const p of plans) {
        const kinds = p.faults.map((f) => f.kind);
        if (scenario.realServer) {
          // A real server takes no faults and holds no reply: the crash is the whole plan.
          assert.deepEqual([p.faults, p.provider, p.providerOp], [[], undefined, undefined], describePlan(p));
          assert.ok(!['in-flight', 'before-lookup'].includes(p.crash.mode), describePlan(p));
        }
        assert.ok(
          p.faults.every((f) => f.op === p.providerOp),
          describePlan(p),
        );
        assert.ok(p.readLagMs <= contract.readAfterWriteLagMs, `lag inside the contract: ${describePlan(p)}`);
        if (p.crash.mode === 'after-commit') {
          // The first reply must answer a commit: nothing refused before it, no lost reply on providers never resent to.
          assert.ok(
            kinds.every((k) => k === 'delay' || (k === 'drop-after-commit' && contract.dedupe === 'idempotency-key')),
            describePlan(p),
          );
        }
        if (p.crash.mode === 'gateway-error') {
          // The first commit is answered 502 or 504, after nothing or a delay; the worker dies on hearing it.
          const gateway = p.faults.filter((f) => f.kind === 'status-after-commit');
          assert.equal(gateway.length, 1, describePlan(p));
          assert.ok([502, 504].includes(gateway[0].status!), describePlan(p));
          assert.ok(
            kinds.every((k) => ['delay', 'status-after-commit', 'drop-after-commit'].includes(k)),
            describePlan(p),
          );
          assert.equal(crashSpecFor(p), `after-commit:${p.operation}`);
        }
        for (const f of p.faults) {
          if (f.kind === 'status-5xx') assert.equal(f.status, 503, 'a 5xx before the commit is the documented one');
        }
        if (p.crash.mode === 'before-lookup') {
          assert.equal(contract.dedupe, 'lookup');
          assert.ok(kinds.includes('drop-after-commit'), 'a lookup only follows an ambiguous failure');
        }
        if (p.crash.mode === 'in-flight') {
          assert.equal(
            kinds.filter((k) => k.endsWith('after-commit'))[0],
            'hold-after-commit',
            'the hold strikes the first commit',
          );
          assert.ok(p.crash.holdMs! >= 3_000);
        }
        if (p.crash.mode === 'random-time') assert.ok(p.crash.delayMs! >= 0);
        assert.equal(p.declined, kinds.includes('decline'));
        if (p.declined)
          assert.equal(p.crash.mode, 'before-send', 'a decline is clean only when the crash precedes any send');
      }
    });
  }

  it('asks for server restarts at the requested rate', () => {
    const renewal = scenarioByName('renewal')!;
    const count = (rate: number) =>
      Array.from({ length: 1000 }, (_, i) => planIteration(SEED, i, renewal, { restartRate: rate })).filter(
        (p) => p.serverRestart,
      ).length;
    assert.equal(count(0), 0);
    assert.equal(count(1), 1000);
    assert.ok(Math.abs(count(0.1) - 100) < 40);
  });

  it('kill each cluster target equally often on the cluster, and spare the worker only where the harness kills it', () => {
    const plans = SCENARIOS.flatMap((scenario) =>
      Array.from({ length: 100 }, (_, i) => planIteration(SEED, i, scenario, { restartRate: 0, target: 'cluster' })),
    );
    for (const target of CLUSTER_FAULT_TARGETS) {
      assert.equal(plans.filter((p) => p.clusterFault?.target === target).length, 25 * SCENARIOS.length, target);
    }
    // Dealt as a run deals them (iteration i runs scenario i % 6): every scenario meets every target.
    const dealt = Array.from({ length: 100 }, (_, i) =>
      planIteration(SEED, i, SCENARIOS[i % SCENARIOS.length], { restartRate: 0, target: 'cluster' }),
    );
    for (const scenario of SCENARIOS) {
      const met = new Set(dealt.filter((p) => p.scenario === scenario.name).map((p) => p.clusterFault!.target));
      assert.deepEqual([...met].sort(), [...CLUSTER_FAULT_TARGETS].sort(), scenario.name);
    }
    for (let batch = 0; batch < 25; batch++) {
      const targets = dealt.slice(batch * 4, batch * 4 + 4).map((p) => p.clusterFault!.target);
      assert.deepEqual([...targets].sort(), [...CLUSTER_FAULT_TARGETS].sort(), 'each target once per four');
    }
    for (const p of plans) {
      const fault = p.clusterFault!;
      assert.ok(fault.downMs >= 300 && fault.downMs <= 3_000, describePlan(p));
      if (fault.spareWorker) assert.ok(['in-flight', 'random-time'].includes(p.crash.mode), describePlan(p));
    }
    const spared = plans.filter((p) => p.clusterFault!.spareWorker).length;
    assert.ok(spared > 0 && spared < plans.length, `some iterations spare the worker: ${spared}`);
  });

  it('plan the same worker crash and faults for a seed on either target', () => {
    for (const scenario of SCENARIOS) {
      for (let i = 0; i < 50; i++) {
        const { clusterFault, ...onCluster } = planIteration(SEED, i, scenario, {
          restartRate: 0.1,
          target: 'cluster',
        });
        assert.ok(clusterFault);
        assert.deepEqual(onCluster, planIteration(SEED, i, scenario, { restartRate: 0.1 }));
      }
    }
  });
});
