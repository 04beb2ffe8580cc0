import { NativeConnection, Worker } from '@temporalio/worker';
import { isSettingsError, retrysafeSettingsFromEnv } from 'retrysafe/worker';
import { tools } from './tools';

async function main(): Promise<void> {
  // What `retrysafe dev` wrote to .retrysafe/dev.env: connection, task queue, payload keys, approval keys, ledger.
  const settings = await retrysafeSettingsFromEnv();
  const connection = await NativeConnection.connect(settings.connectionOptions);
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    dataConverter: settings.dataConverter,
    workflowsPath: require.resolve('./workflows'),
    plugins: [settings.plugin({ tools })],
  });
  console.log('worker ready');
  await worker.run();
  await settings.close();
}

main().catch((err: unknown) => {
  console.error(isSettingsError(err) ? err.message : err);
  process.exit(isSettingsError(err) ? 2 : 1);
});
