import type { Client } from '@temporalio/client';
import type { ExampleClient } from '../../../examples/client';
import type { Stack } from '../../lib/stack';
import type { WorkerProcess } from '../../lib/worker-process';

/** What every scale measurement runs on: one dev server, one worker process, one task queue. */
export interface ScaleContext {
  stack: Stack;
  client: Client;
  retrysafe: ExampleClient;
  taskQueue: string;
  worker: WorkerProcess;
  /** A prefix that keeps this run's workflow IDs apart from any other run's on the same server. */
  tag: string;
  log(line: string): void;
}
