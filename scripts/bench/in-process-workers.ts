import { Client } from '@temporalio/client';
import { DefaultLogger, IllegalStateError, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createBareCharge } from '../../examples/activities/bare-charge';
import { sandboxUrlsFromEnv } from '../../examples/sandbox-env';
import { exampleRegistry } from '../../examples/tools';
import type { Stack } from '../lib/stack';
import { retrysafePlugin, type ActionLedger } from 'retrysafe/worker';

export interface InProcessWorkers {
  /** One client per worker, each on that worker's connection: what `requestEagerStart` needs. */
  clients: Client[];
  stop(): Promise<void>;
}

/**
 * `n` workers in this process, each on a NativeConnection of its own with a client on that same connection (what
 * requestEagerStart needs; the SDK allows one worker per task queue and connection), running the bare charge and
 * the example workflow bundle with retrysafe's plugin (the example tools, the bench's ledger), as an agent service
 * with its own worker does. The legs take the clients in turn.
 */
export async function startInProcessWorkers(
  stack: Stack,
  taskQueue: string,
  n: number,
  ledger: ActionLedger,
): Promise<InProcessWorkers> {
  // Warnings and errors of the in-process workers only, not each state change among the bench's progress lines.
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
  const dataConverter = stack.dataConverter ? { dataConverter: stack.dataConverter } : {};
  const started: Array<{ connection: NativeConnection; worker?: Worker; running?: Promise<void> }> = [];
  const stop = async () => {
    for (const { worker } of started) if (worker?.getState() === 'RUNNING') worker.shutdown();
    await Promise.allSettled(started.map((s) => s.running));
    await Promise.allSettled(started.map((s) => s.connection.close()));
  };
  try {
    for (let i = 0; i < n; i++) {
      const entry: (typeof started)[number] = {
        connection: await NativeConnection.connect({ address: stack.server.address }),
      };
      started.push(entry);
      entry.worker = await Worker.create({
        connection: entry.connection,
        namespace: stack.server.namespace,
        taskQueue,
        workflowBundle: { codePath: stack.workerEnv.RETRYSAFE_WORKFLOW_BUNDLE },
        activities: {
          bareCharge: createBareCharge({ paymentsUrl: stack.providers.payments.url, crash: () => undefined }),
        },
        plugins: [retrysafePlugin({ tools: exampleRegistry(sandboxUrlsFromEnv(stack.workerEnv)), ledger })],
        ...dataConverter,
      });
      entry.running = entry.worker.run();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    clients: started.map(
      ({ connection }) => new Client({ connection, namespace: stack.server.namespace, ...dataConverter }),
    ),
    stop,
  };
}
