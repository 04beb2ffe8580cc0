/**
 * `npm run bench:timeline`: one bare activity and one retrysafe action, side by side, and the events of the last
 * pair in time order (milliseconds from the first event; the run's and the action's interleaved). It shows where
 * one action's time goes: which workflow task runs how long, and which hop waits for which. A single operation
 * on a warm stack, not a benchmark: `npm run bench` measures.
 *   npm run bench:timeline -- [--warmup N]   (default 5 warm-up pairs, whose times are printed too)
 */
import type { Client } from '@temporalio/client';
import { baselineChargeWorkflow, retrysafeChargeWorkflow } from '../examples/workflows/baseline';
import { actionKeyForStep, runWorkflowId } from '../policies/action-key';
import { count } from './bench/args';
import { startStack } from './lib/stack';

interface TimedEvent {
  ms: number;
  who: string;
  what: string;
}

async function eventsOf(client: Client, workflowId: string, who: string): Promise<TimedEvent[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const time = e.eventTime!;
    const ms = Number(time.seconds) * 1000 + Math.floor(Number(time.nanos ?? 0) / 1e6);
    const field = Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? '';
    const attrs = (e as Record<string, { activityType?: { name?: string }; signalName?: string; markerName?: string }>)[
      field
    ];
    const name = attrs?.activityType?.name ?? attrs?.signalName ?? attrs?.markerName ?? '';
    return { ms, who, what: `${field.replace('EventAttributes', '')}${name ? ` ${name}` : ''}` };
  });
}

function print(events: TimedEvent[]): void {
  const sorted = [...events].sort((a, b) => a.ms - b.ms);
  const start = sorted[0]?.ms ?? 0;
  for (const e of sorted)
    process.stdout.write(`${String(e.ms - start).padStart(6)} ms  ${e.who.padEnd(6)}  ${e.what}\n`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--warmup');
  const parsed = count('a whole number of warm-up pairs', 0, 100)
    .default(5)
    .safeParse(at >= 0 ? argv[at + 1] : undefined);
  if (!parsed.success) throw new Error(`--warmup: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const warmup = parsed.data;
  const stack = await startStack();
  try {
    await stack.startWorker({ name: 'timeline' });
    const { client, taskQueue } = stack;
    const charge = (ref: string) => ({
      amountCents: 1200,
      currency: 'usd',
      customerId: 'cus_bench',
      paymentMethod: 'pm_bench',
      merchantReference: ref,
    });
    const stamp = Date.now().toString(36);
    let last = { bare: '', run: '' };
    for (let i = 0; i <= warmup; i++) {
      const name = `timeline-${stamp}-${i}`;
      const bare = `bench:bare:${name}`;
      const run = runWorkflowId('bench', name);
      const t0 = performance.now();
      await client.workflow.execute(baselineChargeWorkflow, {
        workflowId: bare,
        taskQueue,
        args: [charge(`B-${name}`)],
      });
      const t1 = performance.now();
      await client.workflow.execute(retrysafeChargeWorkflow, {
        workflowId: run,
        taskQueue,
        args: [charge(`R-${name}`)],
      });
      const t2 = performance.now();
      process.stdout.write(`pair ${i}: bare ${Math.round(t1 - t0)} ms, retrysafe ${Math.round(t2 - t1)} ms\n`);
      last = { bare, run };
    }
    process.stdout.write('\nbare activity, event by event:\n');
    print(await eventsOf(client, last.bare, 'bare'));
    process.stdout.write('\nretrysafe action, event by event (its run and its action workflow):\n');
    const key = actionKeyForStep(last.run, { operation: 'charge', version: 1 });
    print([...(await eventsOf(client, last.run, 'run')), ...(await eventsOf(client, key, 'action'))]);
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
