/**
 * For the worker-lifetime test: spawns a worker as the project's scripts do (spawnWorker), with the environment
 * given as JSON in RETRYSAFE_TEST_WORKER_ENV, prints the worker's pid and then waits until it is killed.
 */
import { spawnWorker } from '../../scripts/lib/worker-process';

void (async () => {
  const env = JSON.parse(process.env.RETRYSAFE_TEST_WORKER_ENV ?? '{}') as Record<string, string>;
  const worker = await spawnWorker({ name: 'orphan-candidate', env });
  process.stdout.write(`${JSON.stringify({ workerPid: worker.pid })}\n`);
  setInterval(() => undefined, 60_000);
})();
