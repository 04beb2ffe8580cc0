/**
 * A whole retrysafe worker (the engine's workflows and activities over the example tools) in its own process,
 * polling the time-skipping test server: the production entry point (runWorkerProcess), with a test's contract
 * changes applied to the tools and its clock on the test server's. `useTimeSkippingEnv().engineWorker` starts it; its settings come from the
 * environment as any worker's do (TEMPORAL_ADDRESS, RETRYSAFE_TASK_QUEUE, RETRYSAFE_LEDGER, the sandbox URLs).
 */
import { z } from 'zod';
import { sandboxUrlsFromEnv } from '../../examples/sandbox-env';
import { exampleTools } from '../../examples/tools';
import { workerMain } from '../../workers/run-worker';
import { ContractOverride, withContracts } from './contract-override';

const Contracts = z
  .string()
  .default('{}')
  .transform((text) => JSON.parse(text) as unknown)
  .pipe(z.record(z.string(), ContractOverride));

// This machine's clock reads the test server's, as a worker's clock agrees with its cluster's: the server is
// ahead by all the time skipped when the process starts (the workflows' own clock is the server's anyway).
const offsetMs = z.coerce.number().int().default(0).parse(process.env.RETRYSAFE_TS_CLOCK_OFFSET_MS);
const realNow = Date.now.bind(Date);
Date.now = () => realNow() + offsetMs;

workerMain((env) => ({
  tools: withContracts(exampleTools(sandboxUrlsFromEnv(env)), Contracts.parse(env.RETRYSAFE_TS_CONTRACTS)),
  workflowsPath: require.resolve('../../examples/workflows'),
  // The test server never moves a workflow task off a dead worker's sticky queue (a cluster does after the
  // sticky schedule-to-start timeout), so these workers keep no workflow cache and take no sticky tasks.
  tuning: { maxCachedWorkflows: 0 },
}));
