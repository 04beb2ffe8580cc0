import { loadClientConnectConfig } from '@temporalio/envconfig';
import { Client, Connection } from '@temporalio/client';
import { dataConverterFromEnv } from '../codec/codec-config';
import { checkStackSettings, payloadKeyIdsOf } from './stack-settings';

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
 * reads and writes the same encrypted payloads as the workers. A bad key setting throws before anything connects;
 * one that disagrees with what the stack declares (client/stack-settings.ts) throws StackSettingsMismatch, naming it.
 */
export async function connectClient(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ client: Client; connection: Connection; namespace: string }> {
  const { connectionOptions, namespace } = loadConnectConfig(env);
  const dataConverter = dataConverterFromEnv(env);
  const connection = await Connection.connect(connectionOptions);
  try {
    await checkStackSettings(connection.workflowService, namespace, {
      role: 'client',
      payloadKeyIds: payloadKeyIdsOf(dataConverter),
    });
  } catch (err) {
    await connection.close();
    throw err;
  }
  return {
    client: new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) }),
    connection,
    namespace,
  };
}
