/**
 * `npm run bench:timeline`: single operations of the bench's legs on a warm stack, and the events of the last
 * one of each in time order, with the harness's own marks (sent, answered, SIGKILL) on the same clock. It shows
 * where one operation's time goes: which workflow task runs how long, and which hop waits for which. Not a
 * benchmark: `npm run bench` measures.
 *   npm run bench:timeline -- [--legs ID,ID] [--warmup N]   (default bare-activity,retrysafe-action; 5 warm-ups)
 *   npm run bench:timeline -- --legs bare-signal,retrysafe-confirmation
 *   npm run bench:timeline -- --legs bare-local-eager,retrysafe-action-eager   (workers in this process, eager start)
 *   npm run bench:timeline -- --recovery                     (one SIGKILL recovery each, bare and retrysafe)
 */
import type { Client } from '@temporalio/client';
import { ExampleClient } from '../examples/client';
import { exampleRegistry } from '../examples/tools';
import { startInProcessWorkers, type InProcessWorkers } from './bench/in-process-workers';
import { benchLegs, type BenchContext, type Leg } from './bench/legs';
import { measureRecovery, startWorkerPool } from './bench/recovery';
import { eventsOf, printTimeline, type TimedEvent } from './bench/timeline';
import { parseTimelineOptions, UsageError, type TimelineOptions } from './bench/timeline-args';
import { createApprover } from './chaos/approvals';
import { historyIfAny } from './lib/history-json';
import { startStack } from './lib/stack';

/** A recovery's timeline also shows the events of this long before the kill. */
const IN_FLIGHT_CONTEXT_MS = 300;
const write = (line: string) => process.stdout.write(`${line}\n`);

/** The workflows' events; one marked `optional` (an action workflow, started only when needed) may not exist. */
async function historyOf(
  client: Client,
  workflows: Array<{ role: string; workflowId: string; optional?: boolean }>,
) {
  const events: TimedEvent[] = [];
  for (const w of workflows) {
    if (w.optional && !(await historyIfAny(client, w.workflowId))) continue;
    events.push(...(await eventsOf(client, w.workflowId, w.role)));
  }
  return events;
}

async function timeLegs(client: Client, legs: Leg[], options: TimelineOptions): Promise<void> {
  const stamp = Date.now().toString(36);
  const last = new Map<string, { name: string; sentMs: number; answeredMs: number }>();
  for (let i = 0; i <= options.warmup; i++) {
    const times: string[] = [];
    for (const leg of legs) {
      const name = `timeline-${stamp}-${leg.id}-${i}`;
      const operation = await leg.prepare(name);
      const sentMs = Date.now();
      const ms = await operation();
      // The timed part's end: an operation may go on untimed after its answer (the confirmation's charge does).
      last.set(leg.id, { name, sentMs, answeredMs: sentMs + ms });
      times.push(`${leg.id} ${Math.round(ms)} ms`);
    }
    write(`${i < options.warmup ? `warm-up ${i + 1}` : 'timed'}: ${times.join(', ')}`);
  }
  for (const leg of legs) {
    const { name, sentMs, answeredMs } = last.get(leg.id)!;
    write(`\n${leg.label}, event by event (ms from the client's call):`);
    const marks: TimedEvent[] = [
      { ms: sentMs, who: 'client', what: 'sent' },
      { ms: answeredMs, who: 'client', what: 'answered' },
    ];
    printTimeline([...marks, ...(await historyOf(client, leg.workflows!(name)))], sentMs, write);
  }
}

async function timeRecovery(
  stack: Awaited<ReturnType<typeof startStack>>,
  env: Record<string, string>,
  taskQueue: string,
): Promise<void> {
  const pool = await startWorkerPool(2, (i) => stack.startWorker({ name: `${taskQueue}-w${i}`, env }));
  const stamp = Date.now().toString(36);
  for (const side of ['bare', 'retrysafe'] as const) {
    const trace: TimedEvent[] = [];
    const sample = await measureRecovery(side, `timeline-${stamp}-rec-${side}`, {
      ...(stack.ledger ? { ledger: stack.ledger } : {}),
      client: stack.client,
      taskQueue,
      payments: stack.providers.payments,
      pool,
      trace,
    });
    write(`\n${side}: SIGKILL → confirmed in ${Math.round(sample.ms)} ms, ${sample.charges} charge(s) at the provider`);
    write('event by event (ms from the SIGKILL of the worker holding the provider call):');
    const marks: TimedEvent[] = [
      { ms: sample.killedAtEpochMs, who: 'bench', what: 'SIGKILL' },
      { ms: sample.killedAtEpochMs + sample.ms, who: 'bench', what: 'confirmed seen' },
    ];
    const history = await historyOf(stack.client, sample.workflows);
    printTimeline([...marks, ...trace, ...history], sample.killedAtEpochMs, write, {
      // What the server said of the provider call, and what was in flight in the last moments before the kill.
      alsoBefore: (e) => trace.includes(e) || e.ms >= sample.killedAtEpochMs - IN_FLIGHT_CONTEXT_MS,
    });
  }
}

async function main(): Promise<void> {
  // The legs' ids are known before anything starts: a mistyped option costs no stack start.
  const timeable = (ctx: BenchContext) => benchLegs(ctx).filter((leg) => leg.workflows);
  const ids = timeable({} as BenchContext).map((l) => l.id);
  const options = parseTimelineOptions(process.argv.slice(2), ids);
  const stack = await startStack();
  let inProcess: InProcessWorkers | undefined;
  try {
    const approver = createApprover('timeline-approver');
    const taskQueue = `timeline-${Date.now().toString(36)}`;
    const env = { ...approver.workerEnv, RETRYSAFE_TASK_QUEUE: taskQueue };
    // The eager legs need workers in this process, a client on each one's connection (as `npm run bench` has).
    const eagerQueue = `${taskQueue}-eager`;
    const eagerLegs = options.legs.filter((id) => id.endsWith('-eager'));
    if (eagerLegs.length && !options.recovery) {
      inProcess = await startInProcessWorkers(stack, eagerQueue, 1, stack.ledger);
    }
    const all = timeable({
      client: stack.client,
      retrysafe: new ExampleClient(stack.client, { taskQueue, tools: exampleRegistry() }),
      taskQueue,
      approver,
      ...(inProcess ? { eager: { clients: inProcess.clients, taskQueue: eagerQueue, ledger: stack.ledger } } : {}),
    });
    if (options.recovery) {
      await timeRecovery(stack, env, taskQueue);
      return;
    }
    await stack.startWorker({ name: 'timeline', env });
    await timeLegs(
      stack.client,
      options.legs.map((id) => all.find((l) => l.id === id)!),
      options,
    );
  } finally {
    await inProcess?.stop();
    await stack.stop();
  }
}

main().catch((err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`bench:timeline: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
