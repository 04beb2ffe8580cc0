import { loadClientConnectConfig } from '@temporalio/envconfig';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { dataConverterFromEnv } from '../codec/codec-config';

/**
 * Standard Temporal environment configuration: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS_*, TEMPORAL_PROFILE and the TOML config file (TEMPORAL_CONFIG_FILE). The same worker runs
 * against the dev server, the compose deployment or Temporal Cloud without code changes.
 */
export function loadConnectConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadClientConnectConfig({ overrideEnvVars: env as Record<string, string> });
  return {
    connectionOptions: config.connectionOptions,
    namespace: config.namespace ?? 'default',
  };
}

/**
 * A client with the payload codec that RETRYSAFE_PAYLOAD_KEYS_FILE / RETRYSAFE_PAYLOAD_KEYS configure (codec/), so it
 * reads and writes the same encrypted payloads as the workers. A bad key setting throws before anything connects.
 */
export async function connectClient(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ client: Client; connection: Connection; namespace: string }> {
  const { connectionOptions, namespace } = loadConnectConfig(env);
  const dataConverter = dataConverterFromEnv(env);
  const connection = await Connection.connect(connectionOptions);
  return {
    client: new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) }),
    connection,
    namespace,
  };
}

export async function connectWorker(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ connection: NativeConnection; namespace: string }> {
  const { connectionOptions, namespace } = loadConnectConfig(env);
  return { connection: await NativeConnection.connect(connectionOptions), namespace };
}
