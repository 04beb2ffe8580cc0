import path from 'node:path';

import { TEMPORAL_SERVER_VERSION } from '../toolchain/resolve-temporal-server';

/**
 * What a production-like Temporal cluster is made of, shared by `npm run cluster` (scripts/lib/temporal-cluster.ts)
 * and checked against docker-compose.yml by test/unit/compose.test.ts, so the two run the same server the same way.
 */

export { TEMPORAL_SERVER_VERSION };

/** The four services of the real server, each started as its own process (`server start --service <name>`). */
export const CLUSTER_SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

/** More than one shard, so that shard ownership and its movement on a history restart are exercised. */
export const HISTORY_SHARDS = 4;

/** Closed workflows stay visible to operators for a week (the same as the dev server launcher). */
export const NAMESPACE_RETENTION_HOURS = 7 * 24;

/** The SQL plugin for PostgreSQL 12 and later. */
export const SQL_PLUGIN = 'postgres12';

/**
 * Temporal's two databases and the schema each takes, by the names the SQL tool carries built in
 * (`update-schema --schema-name`), so no source checkout or image folder is needed.
 */
export const CLUSTER_DATABASES = [
  { database: 'temporal', schemaName: 'postgresql/v12/temporal' },
  { database: 'temporal_visibility', schemaName: 'postgresql/v12/visibility' },
] as const;

/**
 * The SQL tool's steps for one database, after the connection flags. Each is idempotent (`create-database` accepts
 * an existing one, `setup-schema -v 0.0` never lowers a version, `update-schema` applies only what is missing), so
 * deploy/temporal-schema.sh runs the same steps on every `docker compose up`.
 */
export function schemaSteps(database: string, schemaName: string): string[][] {
  return [
    ['--db', database, 'create-database'],
    ['--db', database, 'setup-schema', '-v', '0.0'],
    ['--db', database, 'update-schema', '--schema-name', schemaName],
  ];
}

/** The dynamic config both run with: the compose file mounts it, `npm run cluster` points the server at it. */
export const DYNAMIC_CONFIG_FILE = path.resolve(__dirname, '..', '..', 'deploy', 'temporal-dynamic-config.yaml');

/** The PostgreSQL major version the cluster was tested on here (Debian's package); compose pins the same. */
export const TESTED_POSTGRES_MAJOR = 15;

/** The Web UI the dev server embeds (CLI 1.9.1: Server 1.32.0, UI 2.54.1); the compose file runs the same UI. */
export const TEMPORAL_UI_VERSION = '2.54.1';

export interface ClusterPorts {
  /** gRPC and membership (ringpop) port of each service, and the frontend's HTTP API port. */
  grpc: Record<ClusterService, number>;
  membership: Record<ClusterService, number>;
  frontendHttp: number;
}

export interface ServerConfigInput {
  ports: ClusterPorts;
  postgres: { host: string; port: number; user: string };
  dynamicConfigFile: string;
  logLevel?: string;
}

/**
 * The server's configuration file (what `server --config-file` reads). JSON is YAML, so it is written as JSON and
 * needs no YAML library. Every service binds loopback only.
 */
export function serverConfig(input: ServerConfigInput): Record<string, unknown> {
  const { ports, postgres } = input;
  const datastore = (databaseName: string) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `${postgres.host}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: '',
      maxConns: 10,
      maxIdleConns: 10,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (service: ClusterService) => ({
    rpc: {
      grpcPort: ports.grpc[service],
      membershipPort: ports.membership[service],
      bindOnLocalHost: true,
      ...(service === 'frontend' ? { httpPort: ports.frontendHttp } : {}),
    },
  });
  const frontend = `127.0.0.1:${ports.grpc.frontend}`;
  return {
    log: { stdout: true, level: input.logLevel ?? 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: {
        default: datastore(CLUSTER_DATABASES[0].database),
        visibility: datastore(CLUSTER_DATABASES[1].database),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: Object.fromEntries(CLUSTER_SERVICES.map((service) => [service, rpc(service)])),
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: frontend,
          httpAddress: `127.0.0.1:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    publicClient: { hostPort: frontend },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
}
