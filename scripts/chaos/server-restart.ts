import { setTimeout as sleep } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import type { Stack } from '../lib/stack';
import type { WorkerProcess } from '../lib/worker-process';

/** A worker the harness keeps alive across a server restart; `respawn` replaces it on the same queue. */
export interface TrackedWorker {
  current: WorkerProcess;
  taskQueue: string;
  respawn(): Promise<WorkerProcess>;
}

export interface RestartReport {
  /** Stop, start on the same SQLite file, ready for calls. */
  restartMs: number;
  /** Workers seen polling again after the restart. */
  reconnected: number;
  /** Workers that did not come back in time and were replaced by a fresh process. */
  replaced: number;
}

/**
 * A restarted server forgets its pollers, so a worker listed as a poller afterwards has reconnected. The
 * SDK's pollers back off while the server is down; 20 s covers that backoff with room to spare.
 */
const RECONNECT_WAIT_MS = 20_000;
const POLL_MS = 250;

/**
 * Restarts the dev server on its SQLite file while work is in flight, then checks that every tracked
 * worker reconnects (it shows up as a poller of its task queue); one that does not is replaced.
 */
export async function restartServerAndCheckWorkers(stack: Stack, workers: TrackedWorker[]): Promise<RestartReport> {
  const started = Date.now();
  await stack.server.restart();
  const restartMs = Date.now() - started;
  const results = await Promise.all(
    workers.map(async (w) => {
      if (!w.current.alive()) return 'gone' as const;
      if (await waitForPoller(stack, w.taskQueue, w.current.pid)) return 'reconnected' as const;
      await w.current.kill('SIGKILL');
      w.current = await w.respawn();
      return 'replaced' as const;
    }),
  );
  return {
    restartMs,
    reconnected: results.filter((r) => r === 'reconnected').length,
    replaced: results.filter((r) => r === 'replaced').length,
  };
}

/** True once a worker process (identity `<pid>@<host>`, the SDK's default) polls the queue's workflow tasks. */
export async function waitForPoller(stack: Stack, taskQueue: string, pid: number, timeoutMs = RECONNECT_WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await stack.client.workflowService.describeTaskQueue({
        namespace: stack.server.namespace,
        taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if ((res.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`))) return true;
    } catch {
      // The client reconnects on its own; until then the question cannot be asked.
    }
    await sleep(POLL_MS);
  }
  return false;
}
