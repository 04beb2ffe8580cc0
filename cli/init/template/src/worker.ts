import { NativeConnection, Worker } from '@temporalio/worker';
import { isSettingsError, retrysafeSettingsFromEnv } from 'retrysafe/worker';
import { startFakeChat } from './fake-chat';
import { tools } from './tools';

async function main(): Promise<void> {
  // Until CHAT_URL names a real chat provider, the worker runs the fake one itself.
  if (!process.env.CHAT_URL) process.env.CHAT_URL = (await startFakeChat()).url;
  // What `retrysafe dev` wrote to .retrysafe/dev.env: connection, task queue, payload keys, approval keys, ledger.
  const settings = await retrysafeSettingsFromEnv();
  const worker = await Worker.create({
    connection: await NativeConnection.connect(settings.connectionOptions),
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    dataConverter: settings.dataConverter,
    workflowsPath: require.resolve('./workflows'),
    plugins: [settings.plugin({ tools })],
  });
  console.log(`worker ready: task queue ${settings.taskQueue}, chat provider ${process.env.CHAT_URL}`);
  await worker.run();
  await settings.close();
}

main().catch((err: unknown) => {
  console.error(isSettingsError(err) ? err.message : err);
  process.exit(isSettingsError(err) ? 2 : 1);
});
