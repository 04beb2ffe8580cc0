import { DBOS, DBOSClient, type WorkflowHandle } from '@dbos-inc/dbos-sdk';
import type { BenchWorkflowResults } from './workflows';
import { APP_NAME, APP_VERSION, POLLING_MS, QUEUE_NAME, WORKFLOW_NAMES } from './settings';

/**
 * The bench's side of the DBOS peer: DBOSClient, DBOS's API for code outside the application. Enqueueing is one
 * insert into the system database, so it works while the service is down or restarting (the crash scenario
 * enqueues onto a service about to die). The workflow ID is the key, and enqueueing an ID that exists returns the
 * existing workflow (DBOS's default `return-existing`), so a second start for the same event attaches to the first.
 */
export interface BenchClient {
  start<W extends keyof BenchWorkflowResults>(
    workflow: W,
    workflowID: string,
    input: unknown,
  ): Promise<WorkflowHandle<BenchWorkflowResults[W]>>;
  /** Resolves once DBOS has recorded the workflow's result (its last step checkpointed). */
  result<R>(handle: WorkflowHandle<R>): Promise<R>;
  destroy(): Promise<void>;
}

/**
 * Also creates DBOS's schema and the queue before the first service launches: a queue registered by the service
 * after its launch is polled only from the dispatcher's next reconcile (about 1 s later), which the first charge
 * would wait out. The service registers the same queue again, with the same settings.
 */
export async function connectBenchClient(systemDatabaseUrl: string): Promise<BenchClient> {
  await DBOS.migrate(systemDatabaseUrl);
  const client = await DBOSClient.create({ systemDatabaseUrl, applicationName: APP_NAME });
  try {
    await client.registerQueue(QUEUE_NAME, { minPollingIntervalMs: POLLING_MS, applicationName: APP_NAME });
  } catch (err) {
    await client.destroy();
    throw err;
  }
  return {
    start: (workflow, workflowID, input) =>
      client.enqueue(
        // The pinned version: dequeued by the service running it, whichever version registered last.
        { queueName: QUEUE_NAME, workflowName: WORKFLOW_NAMES[workflow], workflowID, appVersion: APP_VERSION },
        input,
      ),
    result: (handle) => handle.getResult({ pollingIntervalMs: POLLING_MS }),
    destroy: () => client.destroy(),
  };
}
