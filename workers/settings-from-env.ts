/**
 * retrysafe's worker settings from the environment, in one call, for a team that builds its own worker:
 *
 *   const rs = await retrysafeSettingsFromEnv();
 *   const connection = await NativeConnection.connect(rs.connectionOptions);
 *   const worker = await Worker.create({
 *     connection, namespace: rs.namespace, taskQueue: rs.taskQueue, dataConverter: rs.dataConverter,
 *     workflowsPath: require.resolve('./workflows'), plugins: [rs.plugin({ tools })],
 *   });
 *
 * It reads what `retrysafe dev` writes into dev.env (and what a production deployment sets): the standard Temporal
 * connection variables, RETRYSAFE_TASK_QUEUE, the payload keys, the trusted approval keys, the operators file, the
 * tenant policy file, the ledger (opened and migrated here) and crash injection. A bad setting throws an error
 * that names it (isSettingsError tells those apart), before anything connects.
 *
 * With RETRYSAFE_METRICS_ADDRESS set and no Temporal Runtime installed yet, it installs one that serves Prometheus
 * metrics there (Temporal's and retrysafe's); a process that installs its own Runtime first keeps it, and adds
 * `prometheusMetricsExporter` to it for the same metrics.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Runtime, type NativeConnectionOptions, type BundlerPlugin, type WorkerPlugin } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../codec/codec-config';
import { loadConnectConfig } from '../client/connect';
import {
  LEDGER_ENV_VAR,
  LedgerConfigError,
  LedgerSchemaError,
  ledgerChoiceFromEnv,
  openLedger,
  redact,
  type ActionLedger,
  type LedgerConfig,
} from '../ledger';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import { parseWorkerConfig, type WorkerConfig } from './config';
import { operatorScopesReader } from './operators-file';
import { retrysafePlugin, type RetrysafeMetricsOptions, type RetrysafePluginOptions } from './plugin';
import { loadTenantPolicyFile } from './tenant-policy-file';
import { createLogger } from './logger';
import { installWorkerRuntime } from './runtime';

/** A worker's settings read from the environment, ready for Worker.create. */
export interface RetrysafeEnvSettings {
  config: WorkerConfig;
  taskQueue: string;
  namespace: string;
  /** For NativeConnection.connect: TEMPORAL_ADDRESS, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE… */
  connectionOptions: NativeConnectionOptions;
  /** The payload codec of RETRYSAFE_PAYLOAD_KEYS_FILE / RETRYSAFE_PAYLOAD_KEYS; absent for plain payloads. */
  dataConverter?: DataConverter;
  /** RETRYSAFE_LEDGER, opened and migrated; close() closes it. */
  ledger: ActionLedger;
  tenantPolicies?: TenantPolicyConfig;
  /** The operators file's scopes (re-read on every policy load) over RETRYSAFE_OPERATOR_SCOPES. */
  operatorScopes: OperatorScopes | (() => Promise<OperatorScopes>);
  /** retrysafePlugin with these settings; the options given (the tools at least) are added to them. */
  plugin(options: PluginChoices): WorkerPlugin & BundlerPlugin;
  /** Closes what these settings opened (the ledger). */
  close(): Promise<void>;
}

/** What a worker chooses itself; the rest comes from the environment. */
export type PluginChoices = Pick<RetrysafePluginOptions, 'tools'> &
  Partial<Omit<RetrysafePluginOptions, 'tools' | 'ledger' | 'trustedApprovalKeys'>>;

/** A setting that stops a worker before it starts: its message names the variable or file. */
export function isSettingsError(err: unknown): err is Error {
  // By code rather than class: a setup module may have loaded another copy of the package.
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof LedgerSchemaError || code === 'InvalidConfig' || code === 'InvalidTool';
}

/**
 * Reads the worker settings of `env` (see the module comment). Throws an error naming the setting (isSettingsError)
 * when one is bad.
 */
export async function retrysafeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<RetrysafeEnvSettings> {
  try {
    return await settingsFromEnv(env);
  } catch (err) {
    if (isSettingsError(err) && !Object.keys(env).some((name) => name.startsWith('RETRYSAFE_'))) {
      err.message = `${err.message}\n${whereSettingsComeFrom()}`;
    }
    throw err;
  }
}

/**
 * Said under a settings error when the process has none of retrysafe's settings at all: most often a worker started
 * without the file `retrysafe dev` wrote, and someone who has not yet read where settings come from.
 */
export function whereSettingsComeFrom(cwd = process.cwd()): string {
  const written = path.join(cwd, '.retrysafe', 'dev.env');
  return existsSync(written)
    ? 'No retrysafe setting is in the environment: load the ones `retrysafe dev` wrote, ' +
        'node --env-file=.retrysafe/dev.env dist/worker.js'
    : 'No retrysafe setting is in the environment. Locally, run `npx retrysafe dev` in the project folder and start ' +
        'the worker with node --env-file=.retrysafe/dev.env …; elsewhere, set the variables docs/production.md lists.';
}

async function settingsFromEnv(env: NodeJS.ProcessEnv): Promise<RetrysafeEnvSettings> {
  const config = parseWorkerConfig(env);
  const { connectionOptions, namespace } = loadConnectConfig(env);
  if (config.metricsAddress && !Runtime._instance) {
    installWorkerRuntime({ logger: createLogger({ level: config.logLevel }), metricsAddress: config.metricsAddress });
  }
  // Payload encryption: a bad key set stops the worker here.
  const dataConverter = dataConverterFromEnv(env);
  // An invalid policy file stops the worker here, naming the file and the field.
  const tenantPolicies = config.tenantPolicyFile ? await loadTenantPolicyFile(config.tenantPolicyFile) : undefined;
  // The operators file is read now (a bad one stops the worker, naming the field) and again on every policy load,
  // so an operator added or narrowed later counts without a restart. Inline scopes win.
  let operatorScopes: RetrysafeEnvSettings['operatorScopes'] = config.operatorScopes;
  if (config.operatorsFile) {
    const read = operatorScopesReader(config.operatorsFile);
    const inline = config.operatorScopes;
    await read();
    operatorScopes = async () => ({ ...(await read()), ...inline });
  }
  // The durable ledger: opened and migrated last, so nothing above leaves it open; a schema newer than this code
  // stops the worker.
  // Unset, `none` or a ledger that cannot be opened stops the worker here, naming the setting and the cause.
  const ledger = await openLedgerOrExplain(ledgerChoiceFromEnv(env), env);
  return {
    config,
    taskQueue: config.taskQueue,
    namespace,
    connectionOptions: connectionOptions as NativeConnectionOptions,
    ...(dataConverter ? { dataConverter } : {}),
    ledger,
    ...(tenantPolicies ? { tenantPolicies } : {}),
    operatorScopes,
    plugin: (choices) =>
      retrysafePlugin({
        trustedApprovalKeys: config.trustedApprovalKeys,
        operatorScopes,
        crashAt: config.crashAt,
        ...(config.leaseClockOffsetMs ? { leaseClockOffsetMs: config.leaseClockOffsetMs } : {}),
        metrics: metricsOptionsOf(config),
        ...(tenantPolicies ? { tenantPolicies } : {}),
        ledger,
        ...choices,
      }),
    close: async () => {
      await ledger.close();
    },
  };
}

/** The plugin's metrics options from RETRYSAFE_ESCALATION_WINDOWS and RETRYSAFE_METRICS_POLL_MS. */
export function metricsOptionsOf(config: WorkerConfig): RetrysafeMetricsOptions {
  return {
    ...(config.escalationWindows ? { escalationWindows: config.escalationWindows } : {}),
    ...(config.ledgerPollMs ? { ledgerPollMs: config.ledgerPollMs } : {}),
  };
}

/**
 * Opens and migrates the ledger; one that cannot be opened (a missing directory, a read-only file, PostgreSQL
 * unreachable or refusing) is a LedgerConfigError naming RETRYSAFE_LEDGER and the cause. A schema newer than this
 * code stays a LedgerSchemaError.
 */
async function openLedgerOrExplain(config: LedgerConfig, env: NodeJS.ProcessEnv): Promise<ActionLedger> {
  try {
    return await openLedger(config);
  } catch (err) {
    if (err instanceof LedgerSchemaError || err instanceof LedgerConfigError) throw err;
    const cause = (err as Error).message || String(err);
    throw new LedgerConfigError(
      `${LEDGER_ENV_VAR}=${redact(env[LEDGER_ENV_VAR]?.trim() ?? '')}: the ledger could not be opened: ${cause}`,
    );
  }
}
