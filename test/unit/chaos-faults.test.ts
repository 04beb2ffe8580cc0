import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChaosArgs } from '../../scripts/chaos/args';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { Toxic, ToxicProxy } from '../../scripts/lib/toxiproxy-server';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import {
  FAULT_KINDS,
  REFUSED,
  armFault,
  killsWorker,
  parseFaultKinds,
  type FaultKind,
  type FaultPlan,
} from '../../scripts/chaos/faults';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import { formatTable, gotItsKill, summarize, toJson, type ChaosReport } from '../../scripts/chaos/report';
import type { IterationResult, Variant } from '../../scripts/chaos/types';
import { chaosResult } from '../support/chaos-result';

const SUPPORTED = FAULT_KINDS.filter((k) => !REFUSED[k]);
const renewal = scenarioByName('renewal')!;

function result(index: number, variant: Variant, duplicates = 0): IterationResult {
  const plan = planIteration(7, index, renewal, { restartRate: 0, faults: SUPPORTED });
  const kind = plan.fault!.kind;
  return chaosResult(
    index,
    variant,
    { actualEffects: 3 + duplicates, duplicates },
    { plan, ...(killsWorker(kind) ? {} : { fault: { kind, injected: true, atMs: 10 } }) },
  );
}

describe('chaos --faults', () => {
  it('takes a list or all; refuses the kinds it cannot inject, saying what they lack', () => {
    assert.deepEqual(parseFaultKinds(['all']), SUPPORTED);
    assert.deepEqual(parseFaultKinds(['worker-pause,provider-reset', 'worker-pause']), [
      'worker-pause',
      'provider-reset',
    ]);
    assert.deepEqual(parseFaultKinds(['ledger-partition']), ['ledger-partition']);
    assert.ok(SUPPORTED.includes('ledger-partition'), 'all draws ledger partitions');
    assert.deepEqual(parseFaultKinds(['clock-skew']), ['clock-skew']);
    assert.deepEqual(SUPPORTED, [...FAULT_KINDS], 'no kind is refused');
    assert.throws(() => parseFaultKinds(['cosmic-ray']), /unknown fault kind "cosmic-ray"/);
    assert.deepEqual(parseChaosArgs(['--faults', 'all']).faults, SUPPORTED);
    assert.equal(parseChaosArgs([]).faults, undefined);
    assert.throws(() => parseChaosArgs(['--faults', 'all', '--restart-rate', '0.5']), /server-restart kind/);
  });

  it('deals every kind once in each block of iterations, in an order drawn by the seed, the same on every replay', () => {
    const blocks = 50;
    const plans = Array.from({ length: blocks * SUPPORTED.length }, (_, i) =>
      planIteration(7, i, renewal, { restartRate: 0, faults: SUPPORTED }),
    );
    const counts = new Map<FaultKind, number>();
    for (const p of plans) counts.set(p.fault!.kind, (counts.get(p.fault!.kind) ?? 0) + 1);
    for (const kind of SUPPORTED) assert.equal(counts.get(kind), blocks, `${kind}: ${counts.get(kind)}`);
    const orders = new Set<string>();
    for (let b = 0; b < blocks; b++) {
      const block = plans.slice(b * SUPPORTED.length, (b + 1) * SUPPORTED.length).map((p) => p.fault!.kind);
      assert.deepEqual([...block].sort(), [...SUPPORTED].sort(), `block ${b} takes every kind once`);
      orders.add(block.join());
    }
    assert.ok(orders.size > blocks / 2, `the seed draws the blocks' orders (${orders.size} distinct of ${blocks})`);
    assert.notDeepEqual(
      plans.slice(0, SUPPORTED.length).map((p) => p.fault!.kind),
      Array.from(
        { length: SUPPORTED.length },
        (_, i) => planIteration(8, i, renewal, { restartRate: 0, faults: SUPPORTED }).fault!.kind,
      ),
      'another seed deals another order',
    );
    assert.deepEqual(planIteration(7, 12, renewal, { restartRate: 0, faults: SUPPORTED }), plans[12]);
    // A short run still meets every kind: the first block is the first kinds.length iterations.
    assert.equal(new Set(plans.slice(0, SUPPORTED.length).map((p) => p.fault!.kind)).size, SUPPORTED.length);
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

  it('on the cluster, kills a service beside a worker-kill only: every other kind is the iteration’s one fault', () => {
    const kinds = new Set<FaultKind>();
    for (let i = 0; i < 24; i++) {
      const bare = planIteration(7, i, renewal, { restartRate: 0, target: 'cluster' });
      const plan = planIteration(7, i, renewal, { restartRate: 0, target: 'cluster', faults: SUPPORTED });
      kinds.add(plan.fault!.kind);
      assert.ok(bare.clusterFault, 'without --faults every cluster iteration kills a service');
      if (plan.fault!.kind === 'worker-kill') assert.deepEqual(plan.clusterFault, bare.clusterFault);
      else assert.equal(plan.clusterFault, undefined, `${plan.fault!.kind} at ${i} also planned a service kill`);
    }
    assert.equal(kinds.size, SUPPORTED.length);
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
      /^fault +iterations +injected +dup +lost +unexplained +baseline iterations +baseline dup +settled after heal p50\/max$/m,
    );
    const injected = Object.values(json.byFault!).reduce((n, k) => n + (k.injected ?? 0), 0);
    assert.equal(injected, 24, 'every fault of these iterations struck');
    const missed = retrysafe.map((r) => (r.fault ? { ...r, fault: { ...r.fault, injected: false } } : r));
    const missedByFault = summarize(missed).totals.byFault;
    for (const [kind, k] of Object.entries(missedByFault)) {
      assert.equal(
        k.injected,
        kind === 'worker-kill' ? k.iterations : 0,
        `${kind}: a fault that missed is not injected`,
      );
    }
  });

  it('times each partition from its heal to the work settled, per kind: p50 and max in the table, the samples in --json', () => {
    const healed = [900, 300, -50, 1200].map((settledAfterHealMs, i) => {
      const r = result(i, 'retrysafe');
      const kind = i % 2 === 0 ? 'ledger-partition' : 'temporal-partition';
      return {
        ...r,
        plan: { ...r.plan, fault: { kind } },
        fault: { kind, injected: true, atMs: 10, settledAfterHealMs },
      };
    }) as IterationResult[];
    const byFault = summarize(healed).totals.byFault;
    assert.deepEqual(byFault['ledger-partition']?.settledAfterHealMs, [900, -50]);
    assert.deepEqual(byFault['temporal-partition']?.settledAfterHealMs, [300, 1200]);
    const report = {
      seed: 7,
      target: 'dev-server',
      crashesRequested: 4,
      concurrency: 1,
      durationMs: 1,
      serverRestarts: 0,
      workersReplacedAfterRestart: 0,
      retrysafe: summarize(healed),
      failures: [],
      rerun: 'npm run chaos -- --seed 7',
      logDir: '.out/chaos/x',
      iterations: healed,
    } satisfies ChaosReport;
    assert.match(formatTable(report), /^ledger-partition .* -50\/900 ms$/m);
    assert.match(formatTable(report), /^temporal-partition .* 300\/1200 ms$/m);
  });
});

/**
 * A provider whose request log and held replies the test drives: `pass` commits a request whose reply goes out at
 * once (a saga's charge), `hold` one whose reply is held for `ms` (the plan's hold-after-commit).
 */
function scriptedProvider() {
  const requests: Array<{ op: string; faults: string[] }> = [];
  let held = 0;
  const provider = {
    ledger: async () => ({ requests: [...requests], committedButUnanswered: held }),
    async waitForInflight(predicate: (s: { inflight: number; committedButUnanswered: number }) => boolean, ms = 5_000) {
      const deadline = Date.now() + ms;
      while (!predicate({ inflight: held, committedButUnanswered: held })) {
        if (Date.now() > deadline) throw new Error('inflight condition not met');
        await sleep(5);
      }
    },
  } as unknown as SandboxProvider;
  return {
    provider,
    holding: () => held > 0,
    async pass(op: string, ms: number) {
      requests.push({ op, faults: [] });
      held++;
      await sleep(ms);
      held--;
    },
    async hold(op: string, ms: number) {
      requests.push({ op, faults: ['hold-after-commit'] });
      held++;
      await sleep(ms);
      held--;
    },
  };
}

/** A proxy that notes when a toxic went on and came off, and whether the targeted reply was held at that moment. */
function notingProxy(holding: () => boolean, addDelayMs = 0) {
  const events: Array<{ what: 'add' | 'remove'; toxic: string; holding: boolean }> = [];
  const proxy: ToxicProxy = {
    name: 'payments',
    host: '127.0.0.1',
    port: 1,
    async addToxic(toxic: Toxic) {
      await sleep(addDelayMs);
      events.push({ what: 'add', toxic: toxic.type, holding: holding() });
    },
    async removeToxic(name: string) {
      events.push({ what: 'remove', toxic: name, holding: holding() });
    },
    cut: async () => undefined,
    heal: async () => undefined,
  };
  return { proxy, events };
}

describe('chaos --faults: a reply toxic strikes the targeted request only', () => {
  const saga = scenarioByName('saga-compensation')!;

  async function inject(kind: 'provider-reset' | 'provider-timeout', addDelayMs = 0) {
    const plan = planIteration(7, 0, saga, { restartRate: 0, faults: [kind] }) as ReturnType<typeof planIteration> & {
      fault: FaultPlan;
    };
    const scripted = scriptedProvider();
    // An earlier iteration's held refund on the lane's provider: not this iteration's moment.
    await scripted.hold(plan.providerOp!, 0);
    const { proxy, events } = notingProxy(scripted.holding, addDelayMs);
    const injection = await armFault({
      plan,
      provider: scripted.provider,
      proxies: { providers: { payments: proxy }, temporal: proxy },
      worker: {} as WorkerProcess,
      startedAtMs: Date.now(),
      startSuccessor: async () => undefined,
    });
    assert.equal(events.length, 0, 'nothing is armed before the work starts');
    const work = (async () => {
      await sleep(50);
      await scripted.pass('charges.create', 60); // the saga's charge, before the refund: must pass untouched
      assert.equal(events.length, 0, 'the charge passed without a toxic');
      await sleep(50);
      await scripted.hold(plan.providerOp!, 400);
    })();
    const record = await injection(work);
    await work;
    return { plan, record, events };
  }

  for (const kind of ['provider-reset', 'provider-timeout'] as const) {
    it(`${kind}: on the proxy only while the refund's reply is held, off once it went out; counted as a hit`, async () => {
      const { plan, record, events } = await inject(kind);
      assert.equal(record.injected, true, record.detail);
      assert.equal(plan.provider, 'payments');
      assert.deepEqual(
        events.map((e) => [e.what, e.holding]),
        [
          ['add', true],
          ['remove', false],
        ],
      );
      assert.equal(events[0].toxic, kind === 'provider-reset' ? 'reset_peer' : 'timeout');
    });
  }

  it('is not counted as injected when the held reply went out before the toxic was in place', async () => {
    const { record, events } = await inject('provider-reset', 700);
    assert.equal(record.injected, false);
    assert.match(record.detail ?? '', /went out before the toxic/);
    assert.deepEqual(
      events.map((e) => e.what),
      ['add', 'remove'],
      'lifted all the same',
    );
  });
});
