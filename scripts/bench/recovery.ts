import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { exampleRegistry } from '../../examples/tools';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { baselineChargeWorkflow, retrysafeChargeWorkflow } from '../../examples/workflows/baseline';
import { actionState, recordsWhere } from '../chaos/observe';
import type { WorkerProcess } from '../lib/worker-process';
import { epochMs, type TimedEvent } from './timeline';
import { actionKeyForStep, runWorkflowId } from 'retrysafe';
import { WORKFLOW_TASK_TIMEOUT } from '../../policies/timeouts';
import type { ActionLedger } from 'retrysafe/worker';

/**
 * Recovery time: the provider commits a charge and holds the reply, the harness SIGKILLs whichever worker
 * holds that provider call, and the clock runs until the charge is confirmed (retrysafe: the action's
 * status; bare: the workflow's result) by the surviving worker. Bounded below, for the bare activity, by the
 * heartbeat timeout plus the retry interval; for retrysafe, whose act runs in the run's workflow task (a local
 * activity), by that task's timeout, after which the task and the act run again on the surviving worker.
 */
export interface RecoverySample {
  side: 'retrysafe' | 'bare';
  /** SIGKILL → confirmed. */
  ms: number;
  /** Charges the provider holds for this order afterwards: 1 is right, 2 is a duplicate. */
  charges: number;
  /** When the SIGKILL was sent (epoch ms, the clock history events use), and which workflows recovered. */
  killedAtEpochMs: number;
  workflows: Array<{ role: string; workflowId: string }>;
}

export interface WorkerPool {
  workers: WorkerProcess[];
  /** Starts a fresh worker in place of a dead one. */
  replace(dead: WorkerProcess): Promise<void>;
}

/** `size` workers from `spawn(i)`; a replaced worker is spawned again with the same index. */
export async function startWorkerPool(size: number, spawn: (i: number) => Promise<WorkerProcess>): Promise<WorkerPool> {
  const pool: WorkerPool = {
    workers: await Promise.all(Array.from({ length: size }, (_, i) => spawn(i))),
    async replace(dead) {
      const i = pool.workers.indexOf(dead);
      pool.workers[i] = await spawn(i);
    },
  };
  return pool;
}

/**
 * Outlasts the kill (it follows the commit within ~100 ms); short enough to have expired before the next
 * measurement, whose wait for "a committed, unanswered request" must not see this one.
 */
const HOLD_MS = 5_000;
const WAIT_MS = 60_000;
const POLL_MS = 25;

export async function measureRecovery(
  side: 'retrysafe' | 'bare',
  name: string,
  deps: {
    client: Client;
    taskQueue: string;
    payments: SandboxProvider;
    pool: WorkerPool;
    /** When given, the holder's pending activity is watched after the kill and what the server says of it kept here. */
    trace?: TimedEvent[];
    /** The workers' ledger: an action the run settled on its row has no workflow to ask. */
    ledger?: Pick<ActionLedger, 'get'>;
  },
): Promise<RecoverySample> {
  const { client, taskQueue, payments, pool } = deps;
  const input = {
    amountCents: 4_990,
    currency: 'usd',
    customerId: 'cus_bench',
    paymentMethod: 'pm_bench',
    merchantReference: `R-${name}`,
  };
  await payments.clearFaults();
  await payments.waitForInflight((s) => s.inflight === 0 && s.committedButUnanswered === 0, WAIT_MS);
  await payments.setFaults([{ op: 'charges.create', kind: 'hold-after-commit', delayMs: HOLD_MS, times: 1 }]);
  const runId = runWorkflowId('bench', name);
  const actionKey = actionKeyForStep(runId, { operation: 'charge', version: exampleRegistry().get('charge').version });
  const handle =
    side === 'retrysafe'
      ? await client.workflow.start(retrysafeChargeWorkflow, {
          workflowId: runId,
          taskQueue,
          args: [input],
          workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        })
      : await client.workflow.start(baselineChargeWorkflow, {
          workflowId: `bench:recovery:${name}`,
          taskQueue,
          args: [input],
        });
  await payments.waitForInflight((s) => s.committedButUnanswered >= 1, WAIT_MS);

  // The activity that holds the provider call names its worker (`<pid>@<host>`, the SDK's default identity). In
  // retrysafe it is the run's (its act, or its owner's claim and send) or, for an action that sends itself, the action's.
  const workflows =
    side === 'retrysafe'
      ? [
          { role: 'run', workflowId: runId },
          { role: 'action', workflowId: actionKey },
        ]
      : [{ role: 'bare', workflowId: handle.workflowId }];
  const holders = workflows.map((w) => w.workflowId);
  const victim = await waitForHolder(client, holders, pool);
  const killedAt = performance.now();
  const killedAtEpochMs = Date.now();
  await victim.kill('SIGKILL');
  const watching = new AbortController();
  const watched = deps.trace ? watchPendingActivities(client, workflows, deps.trace, watching.signal) : undefined;
  let ms: number;
  try {
    if (side === 'retrysafe') {
      const deadline = Date.now() + WAIT_MS;
      while ((await actionState(client, actionKey, deps.ledger))?.status !== 'confirmed') {
        if (Date.now() > deadline) throw new Error(`${actionKey} not confirmed ${WAIT_MS} ms after the kill`);
        await sleep(POLL_MS);
      }
    } else {
      await handle.result();
    }
    ms = performance.now() - killedAt;
  } finally {
    watching.abort();
    await watched;
  }
  if (side === 'retrysafe') await handle.result();
  await payments.clearFaults();
  await pool.replace(victim);
  const charges = recordsWhere(await payments.ledger(), 'charges', {
    merchantReference: input.merchantReference,
  }).length;
  return { side, ms, charges, killedAtEpochMs, workflows };
}

/** The workflow's pending activities as the server describes them; none while it cannot be described. */
async function pendingActivitiesOf(client: Client, workflowId: string) {
  const { raw } = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => ({ raw: { pendingActivities: [] } }));
  return raw.pendingActivities ?? [];
}

async function waitForHolder(client: Client, workflowIds: string[], pool: WorkerPool): Promise<WorkerProcess> {
  const deadline = Date.now() + WAIT_MS;
  const alive = (identity: string | null | undefined) => {
    const pid = Number(String(identity ?? '').split('@')[0]);
    return pool.workers.find((w) => w.pid === pid && w.alive());
  };
  while (Date.now() < deadline) {
    for (const workflowId of workflowIds) {
      for (const a of await pendingActivitiesOf(client, workflowId)) {
        const worker = alive(a.lastWorkerIdentity);
        if (worker) return worker;
      }
      // A run's act is a local activity: it runs in the workflow task the worker started and has not completed.
      const worker = alive(await workflowTaskHolder(client, workflowId));
      if (worker) return worker;
    }
    await sleep(POLL_MS);
  }
  throw new Error(`no worker of the pool holds an activity or a workflow task of ${workflowIds.join(' or ')}`);
}

/** The identity of the worker that started the workflow's open workflow task, read from its history; none when closed. */
async function workflowTaskHolder(client: Client, workflowId: string): Promise<string | undefined> {
  const history = await client.workflow
    .getHandle(workflowId)
    .fetchHistory()
    .catch(() => undefined);
  let holder: string | undefined;
  for (const e of history?.events ?? []) {
    if (e.workflowTaskStartedEventAttributes) holder = e.workflowTaskStartedEventAttributes.identity ?? undefined;
    if (e.workflowTaskCompletedEventAttributes || e.workflowTaskFailedEventAttributes) holder = undefined;
    if (e.workflowTaskTimedOutEventAttributes) holder = undefined;
  }
  return holder;
}

/**
 * Polls the pending activities of `workflows` until `stop`, and records each distinct fact once: the last
 * heartbeat the server holds, when an attempt failed and why, and when the next one is due.
 */
async function watchPendingActivities(
  client: Client,
  workflows: ReadonlyArray<{ role: string; workflowId: string }>,
  into: TimedEvent[],
  stop: AbortSignal,
): Promise<void> {
  const seen = new Set<string>();
  const note = (who: string, at: number | undefined, what: string) => {
    const fact = `${who} ${what} ${at}`;
    if (at === undefined || seen.has(fact)) return;
    seen.add(fact);
    into.push({ ms: at, who, what });
  };
  while (!stop.aborted) {
    for (const { role, workflowId } of workflows) {
      const who = `${role} (server)`;
      for (const a of await pendingActivitiesOf(client, workflowId)) {
        const attempt = a.attempt ?? 1;
        // A retried attempt shows its predecessor's last heartbeat until it beats itself: one fact, said once.
        note(who, epochMs(a.lastHeartbeatTime), 'last heartbeat the server holds');
        if (a.lastFailure) {
          note(who, epochMs(a.lastAttemptCompleteTime), `attempt ${attempt - 1} failed: ${a.lastFailure.message}`);
          note(who, epochMs(a.nextAttemptScheduleTime), `attempt ${attempt} due`);
        }
      }
    }
    await sleep(POLL_MS);
  }
}
