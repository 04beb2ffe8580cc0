import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import { runChaos } from '../../scripts/chaos/run';
import { CRASH_MODES } from '../../scripts/chaos/types';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { BASELINE_RUN, baselineModes, SHORT_RUN } from '../support/short-chaos-run';

const {
  seed: SEED,
  scenarios: SCENARIOS,
  restartRate: RESTART_RATE,
  crashes: CRASHES,
  concurrency: CONCURRENCY,
} = SHORT_RUN;

describe('chaos harness on the real dev server, providers and worker processes', () => {
  let stack: Stack;
  const progress: string[] = [];

  let dir: string;
  before(async () => {
    // With the durable ledger, as every chaos run: each iteration checks it against the providers.
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-chaos-ledger-'));
    stack = await startStack({ ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}` });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('SIGKILLs a worker once per requested crash and finds no duplicate, no lost effect and nothing unexplained', async () => {
    const report = await runChaos({
      crashes: CRASHES,
      seed: SEED,
      scenarios: [...SCENARIOS],
      concurrency: CONCURRENCY,
      restartRate: RESTART_RATE,
      stack,
      log: (line) => progress.push(line),
    });
    const t = report.retrysafe.totals;
    const why = `\n${progress.join('\n')}\n${JSON.stringify(report.failures, null, 2)}`;
    assert.equal(t.crashes, CRASHES, `one real SIGKILL per crash${why}`);
    assert.equal(t.missedPoints, 0, `every armed point was reached${why}`);
    assert.equal(t.duplicates, 0, why);
    assert.equal(t.lost, 0, why);
    assert.equal(t.unexplained, 0, why);
    assert.equal(t.expectedEffects, t.actualEffects, why);
    assert.ok((t.ledgerRows ?? 0) >= CRASHES, `the ledger holds the iterations' actions${why}`);
    assert.equal(t.ledgerOutOfStep, 0, `the ledger agrees with the providers${why}`);
    const modes = new Set(report.iterations.map((r) => r.plan.crash.mode));
    assert.deepEqual([...modes].sort(), [...CRASH_MODES].sort(), 'every crash mode was drawn');
    const batches = Array.from({ length: Math.ceil(CRASHES / CONCURRENCY) }, (_, b) => b);
    const plannedRestarts = batches.filter((b) =>
      Array.from({ length: CONCURRENCY }, (_, j) => b * CONCURRENCY + j).some(
        (i) =>
          planIteration(SEED, i, scenarioByName(SCENARIOS[i % SCENARIOS.length])!, { restartRate: RESTART_RATE })
            .serverRestart,
      ),
    ).length;
    assert.equal(report.serverRestarts, plannedRestarts, 'the dev server was restarted where the seed said');
    assert.ok(plannedRestarts >= 1);
    // A lost email reply must end with a person's decision, never with a resend.
    assert.ok(report.retrysafe.scenarios['email-no-key'].needsReview >= 1, why);
    // Every scenario ran and was counted: a compensated renewal is four effects, two agents share three.
    assert.deepEqual(Object.keys(report.retrysafe.scenarios).sort(), [...SCENARIOS].sort());
    assert.equal(report.retrysafe.scenarios['saga-compensation'].expectedEffects, 8, why);
    assert.equal(report.retrysafe.scenarios['multi-agent'].actualEffects, 6, why);
  });

  it('starts no iteration once stopped, and says why in the report', async () => {
    const report = await runChaos({
      crashes: CRASHES,
      seed: SEED,
      scenarios: [...SCENARIOS],
      concurrency: 1,
      restartRate: 0,
      stack,
      stop: AbortSignal.abort('the 1-minute budget ran out'),
    });
    assert.equal(report.iterations.length, 0);
    assert.equal(report.retrysafe.totals.crashes, 0);
    assert.equal(
      report.stoppedEarly,
      `the 1-minute budget ran out, with ${CRASHES} of ${CRASHES} iteration(s) not started`,
    );
  });

  it('sees the duplicates a bare Temporal activity makes under the same after-commit and gateway-error crashes', async () => {
    // Renewals killed right after the provider committed the charge: with its answer, and after a 502/504 reply.
    const { scenarios, indices, modes } = BASELINE_RUN;
    assert.deepEqual(baselineModes(), modes);
    const report = await runChaos({
      crashes: Math.max(...indices) + 1,
      seed: SEED,
      scenarios: [...scenarios],
      concurrency: 1,
      restartRate: 0,
      only: [...indices],
      baseline: true,
      stack,
    });
    assert.equal(report.retrysafe.totals.crashes, 2);
    assert.equal(report.retrysafe.totals.duplicates, 0);
    assert.equal(report.baseline?.totals.crashes, 2);
    for (const mode of modes) {
      const byMode = report.baseline?.scenarios.renewal?.byMode[mode];
      assert.ok((byMode?.duplicates ?? 0) >= 1, `${mode}: a fresh key per attempt charges twice`);
    }
  });
});
