import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Iteration } from '../../scripts/chaos/iteration';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';
import { needsBatches, restartsAtItsMoment, runInLanes, type Work } from '../../scripts/chaos/schedule';
import type { IterationResult } from '../../scripts/chaos/types';
import { chaosResult } from '../support/chaos-result';

const renewal = scenarioByName('renewal')!;

function work(index: number, restartRate = 0): Work {
  return { variant: 'retrysafe', plan: planIteration(7, index, renewal, { restartRate }) };
}

/** An iteration that takes `ms` from begin to its result, and writes what happens to it into `events`. */
function fakeIteration(w: Work, lane: number, ms: number, events: string[]): Iteration {
  const i = w.plan.index;
  const result = chaosResult(i, w.variant, {}, { plan: w.plan, signal: null, durationMs: ms });
  const fake = {
    prepare: () => events.push(`prepare #${i} on lane ${lane}`),
    // As a worker-pause's iteration does, it spends its time in begin (the pause); finish only counts.
    begin: async () => {
      events.push(`begin #${i}`);
      await sleep(ms - 10);
    },
    finish: async () => {
      await sleep(10);
      events.push(`finish #${i}`);
      return result;
    },
    abandon: async () => {
      events.push(`abandon #${i}`);
    },
  };
  return fake as unknown as Iteration;
}

describe('chaos schedule: lanes that run on', () => {
  it('keeps the other lanes busy while one iteration is slow (a pause), instead of waiting for it', async () => {
    const events: string[] = [];
    const all = [0, 1, 2, 3, 4].map((i) => work(i));
    const results: IterationResult[] = [];
    const started = Date.now();
    const ran = await runInLanes({
      work: all,
      concurrency: 2,
      // #0 is the slow one; each of the others takes a fifth of its time.
      make: (w, lane) => fakeIteration(w, lane, w.plan.index === 0 ? 500 : 100, events),
      results,
      log: () => undefined,
      describe: () => '',
    });
    const elapsed = Date.now() - started;
    assert.deepEqual(ran, {});
    // Lane 1 ran #1 to #4 while lane 0 held #0: #0 comes last. In batches of two this would take 500 + 500 + 100.
    assert.deepEqual(
      results.map((r) => r.index),
      [1, 2, 3, 4, 0],
    );
    assert.ok(elapsed < 900, `took ${elapsed} ms; lanes that wait for each other take over 1000`);
    for (const i of [2, 3, 4]) assert.ok(events.includes(`prepare #${i} on lane 1`), `#${i} ran on lane 1`);
  });

  it("starts a lane's next worker while its current iteration recovers, as batches do", async () => {
    const events: string[] = [];
    await runInLanes({
      work: [work(0), work(1)],
      concurrency: 1,
      make: (w, lane) => fakeIteration(w, lane, 40, events),
      results: [],
      log: () => undefined,
      describe: () => '',
    });
    assert.deepEqual(events, [
      'prepare #0 on lane 0',
      'begin #0',
      'prepare #1 on lane 0',
      'finish #0',
      'begin #1',
      'finish #1',
    ]);
  });

  it('once stopped, begins nothing more: what was prepared is abandoned and the report says how many never ran', async () => {
    const events: string[] = [];
    const stop = new AbortController();
    const lines: string[] = [];
    const results: IterationResult[] = [];
    const ran = await runInLanes({
      work: [0, 1, 2, 3, 4, 5].map((i) => work(i)),
      concurrency: 2,
      make: (w, lane) => {
        if (w.plan.index === 2) stop.abort('the 1-minute budget ran out');
        return fakeIteration(w, lane, 40, events);
      },
      results,
      log: (l) => lines.push(l),
      describe: (r) => `  · #${r.index}`,
      stop: stop.signal,
    });
    assert.deepEqual(results.map((r) => r.index).sort(), [0, 1]);
    assert.ok(!events.some((e) => /^begin #[2-5]/.test(e)), events.join('\n'));
    assert.ok(events.includes('abandon #2') && events.includes('abandon #3'), events.join('\n'));
    assert.equal(ran.stoppedEarly, 'the 1-minute budget ran out, with 4 of 6 iteration(s) not started');
    assert.ok(lines.includes(`stopping: ${ran.stoppedEarly}`));
    assert.match(lines.find((l) => l.startsWith('[retrysafe] 1/6')) ?? '', /· dup 0 · lost 0 · unexplained 0 ·/);
  });

  it('stopped before it starts, prepares no worker at all', async () => {
    const events: string[] = [];
    const ran = await runInLanes({
      work: [0, 1, 2].map((i) => work(i)),
      concurrency: 2,
      make: (w, lane) => fakeIteration(w, lane, 10, events),
      results: [],
      log: () => undefined,
      describe: () => '',
      stop: AbortSignal.abort('interrupted'),
    });
    assert.deepEqual(events, []);
    assert.equal(ran.stoppedEarly, 'interrupted, with 3 of 3 iteration(s) not started');
  });

  it('tells each begun iteration which iterations are in flight on every lane (what a server restart reaches)', async () => {
    const seen: string[] = [];
    await runInLanes({
      work: [0, 1, 2].map((i) => work(i)),
      concurrency: 2,
      // #0 is begun (at 190 ms) while #1 (590 ms) is still beginning on lane 1; #2 follows #0 on lane 0 (390 ms).
      make: (w, lane) => fakeIteration(w, lane, w.plan.index === 1 ? 600 : 200, []),
      results: [],
      log: () => undefined,
      describe: () => '',
      afterBegin: async (_it, w, inFlight) => {
        seen.push(`#${w.plan.index} begun with ${inFlight.length} in flight`);
      },
    });
    assert.deepEqual(seen, ['#0 begun with 2 in flight', '#2 begun with 2 in flight', '#1 begun with 1 in flight']);
  });

  it('keeps batches only for runs that restart the dev server between a batch crashes and recovers', () => {
    const restartFaults = [0, 1, 2].map((i) => ({
      variant: 'retrysafe' as const,
      plan: planIteration(7, i, renewal, { restartRate: 0, faults: ['server-restart'] }),
    }));
    assert.ok(restartFaults.every((w) => w.plan.serverRestart && restartsAtItsMoment(w)));
    assert.equal(needsBatches(restartFaults), false, 'a server-restart fault restarts at its own moment');
    assert.equal(needsBatches([0, 1, 2].map((i) => work(i))), false);
    const restarting = Array.from({ length: 40 }, (_, i) => work(i, 0.5));
    assert.ok(
      restarting.some((w) => w.plan.serverRestart),
      'the seed draws a restart at this rate',
    );
    assert.equal(needsBatches(restarting), true);
  });
});
