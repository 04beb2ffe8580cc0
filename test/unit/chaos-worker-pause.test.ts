import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { inflictCrash } from '../../scripts/chaos/crash';
import { armFault, judgeWorkerExit, signalWorker, type FaultPlan } from '../../scripts/chaos/faults';
import { planIteration } from '../../scripts/chaos/plan';
import { scenarioByName } from '../../scripts/chaos/registry';

/** A real child process as the harness's WorkerProcess; `seen` says whether this process has seen its exit yet. */
function childWorker(script: string) {
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  let gone = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    }),
  );
  let seen = true;
  const worker = {
    pid: child.pid!,
    name: 'doomed',
    exited,
    output: () => 'worker-ready\nsending refund',
    alive: () => !(gone && seen),
    kill: async (sig: NodeJS.Signals = 'SIGKILL') => {
      child.kill(sig);
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  } satisfies WorkerProcess;
  return { worker, hideExit: () => (seen = false) };
}

/**
 * A provider whose log is empty when the fault is armed (the iteration's requests begin after it) and that holds the
 * plan's targeted reply as soon as the fault looks: the fault's moment has come.
 */
function holdingProvider(op: string): SandboxProvider {
  let reads = 0;
  return {
    ledger: async () =>
      reads++ === 0
        ? { requests: [], committedButUnanswered: 0 }
        : { requests: [{ op, faults: ['hold-after-commit'] }], committedButUnanswered: 1 },
    waitForInflight: async () => undefined,
  } as unknown as SandboxProvider;
}

function pausePlan(durationMs: number) {
  const saga = scenarioByName('saga-compensation')!;
  const plan = planIteration(7, 0, saga, { restartRate: 0, faults: ['worker-pause'] });
  return { ...plan, fault: { ...plan.fault!, durationMs } } as typeof plan & { fault: FaultPlan };
}

/** Arms a worker-pause of `durationMs` on `worker` and injects it, with work that never settles on its own. */
async function pauseWorker(worker: WorkerProcess, durationMs: number, startSuccessor: () => Promise<void>) {
  const plan = pausePlan(durationMs);
  const inject = await armFault({
    plan,
    provider: holdingProvider(plan.providerOp!),
    worker,
    startedAtMs: Date.now(),
    startSuccessor,
  });
  return inject(new Promise<void>(() => undefined));
}

describe('chaos worker-pause: a worker gone before it is paused or woken', () => {
  it('signalWorker: ESRCH (the process exited, its exit not seen here yet) is "gone", not a harness error', () => {
    const worker = { pid: 12345, alive: () => true };
    const esrch = Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    assert.equal(
      signalWorker(worker, 'SIGSTOP', () => {
        throw esrch;
      }),
      false,
    );
    assert.equal(
      signalWorker({ pid: 1, alive: () => false }, 'SIGSTOP', () => assert.fail('a dead worker is not signalled')),
      false,
    );
    const sent: string[] = [];
    assert.equal(
      signalWorker(worker, 'SIGCONT', (_pid, sig) => sent.push(sig)),
      true,
    );
    assert.deepEqual(sent, ['SIGCONT']);
    // Any other refusal is the harness's own: thrown, not mistaken for an exit that would then be waited for forever.
    const eperm = Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    assert.throws(
      () =>
        signalWorker(worker, 'SIGSTOP', () => {
          throw eperm;
        }),
      /EPERM/,
    );
  });

  it('judgeWorkerExit: only a clean exit after the work settled is explained', () => {
    const base = { pid: 42, when: 'during its pause' as const, output: 'a\nb\nc\nd' };
    const killed = judgeWorkerExit({ ...base, exit: { code: null, signal: 'SIGKILL' }, workSettled: true });
    assert.equal(killed.explained, false);
    assert.match(killed.reason, /pid 42\) exited during its pause, code null, signal SIGKILL \(killed by SIGKILL/);
    assert.match(killed.reason, /its last output: b \| c \| d$/);
    const crashed = judgeWorkerExit({ ...base, exit: { code: 1, signal: null }, workSettled: true });
    assert.equal(crashed.explained, false);
    assert.match(crashed.reason, /\(it failed\)/);
    const early = judgeWorkerExit({ ...base, exit: { code: 0, signal: null }, workSettled: false });
    assert.equal(early.explained, false);
    assert.match(early.reason, /while the work was still open/);
    const done = judgeWorkerExit({ ...base, exit: { code: 0, signal: null }, workSettled: true });
    assert.equal(done.explained, true);
    assert.match(done.reason, /a clean exit after the work had settled/);
  });

  it('a worker that exited before its pause (ESRCH) is recorded with its exit, not thrown as "kill ESRCH"', async () => {
    const { worker, hideExit } = childWorker('process.exit(3)');
    await worker.exited;
    hideExit(); // the kernel has reaped it, but the harness has not heard yet: alive() still says true
    let successors = 0;
    const record = await pauseWorker(worker, 50, async () => void successors++);
    assert.equal(record.injected, true);
    assert.equal(record.workerExitExplained, false);
    assert.match(record.workerExited ?? '', /exited before its pause, code 3, signal null \(it failed\)/);
    assert.equal(successors, 0, 'the iteration starts the successor itself');
  });

  it('a worker killed while stopped is found gone at SIGCONT and reported unexplained, with the signal', async () => {
    const { worker } = childWorker('setTimeout(() => undefined, 60_000)');
    await sleep(50);
    // Someone else's SIGKILL while the worker is stopped (a stopped process ends only by a signal).
    const record = await pauseWorker(worker, 150, async () => worker.kill('SIGKILL'));
    assert.equal(record.workerExitExplained, false);
    assert.match(record.workerExited ?? '', /exited during its pause, code null, signal SIGKILL/);
  });

  it('a worker paused and woken that lives on leaves no exit on the record', async () => {
    const { worker } = childWorker('setTimeout(() => undefined, 60_000)');
    await sleep(50);
    const record = await pauseWorker(worker, 100, async () => undefined);
    assert.equal(record.workerExited, undefined);
    assert.equal(worker.alive(), true);
    await worker.kill('SIGKILL');
  });
});

describe('chaos stalled-owner: a worker that dies while it is stalled', () => {
  it('is reported with its exit, not thrown as "kill ESRCH" when the harness continues it', async () => {
    // Stops itself at once, as the crash hook does at the stall point.
    const { worker } = childWorker("process.kill(process.pid, 'SIGSTOP'); setTimeout(() => undefined, 60_000)");
    const base = pausePlan(0);
    const plan = { ...base, fault: undefined, crash: { mode: 'stalled-owner' as const, stallMs: 300 } };
    const record = await inflictCrash({
      plan,
      doomed: worker,
      settled: new Promise(() => undefined),
      startedAtMs: 0,
      // Someone else's SIGKILL once it is stopped at the point, before the harness's SIGCONT 300 ms later.
      atPoint: () => void worker.kill('SIGKILL'),
    });
    assert.equal(record.pointReached, true);
    assert.equal(record.signal, 'SIGKILL');
  });
});
