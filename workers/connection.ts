import { NativeConnection } from '@temporalio/worker';
import { loadConnectConfig } from '../client/connect';

export { connectClient, loadConnectConfig } from '../client/connect';

/** A worker's connection from the standard Temporal environment configuration (see client/connect.ts). */
export async function connectWorker(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ connection: NativeConnection; namespace: string }> {
  const { connectionOptions, namespace } = loadConnectConfig(env);
  return { connection: await NativeConnection.connect(connectionOptions), namespace };
}
