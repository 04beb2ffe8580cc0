import type { DataConverter } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import type { Planner } from '../activities/planners/planner';
import type { ActionLedger } from '../ledger';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import type { AnyTool } from '../policies/tool';
import type { ToolRegistry } from '../policies/tool-registry';
import type { WorkerConfig } from './config';
import { retrysafePlugin } from './plugin';
import { metricsOptionsOf } from './settings-from-env';

export { STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT } from './plugin';

/**
 * Everything createWorker needs: connection, configuration, tools, and what the entry point loaded (policies,
 * operators, codec, ledger).
 */
export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  config: WorkerConfig;
  /** The tools this worker runs: the only place the engine learns of them. A malformed tool stops the worker here. */
  tools: readonly AnyTool[] | ToolRegistry;
  /**
   * The workflow module: it re-exports the engine's workflows (`export * from 'retrysafe/workflows'`)
   * beside the application's own. Defaults to the engine's alone.
   */
  workflowsPath?: string;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** The application's own activities (reads, baselines), registered beside the engine's. */
  activities?: Record<string, (...args: never[]) => unknown>;
  /** Called just before a crash point SIGKILLs the worker (tests log it). */
  onCrash?: (point: string, operation: string) => void;
  identity?: string;
  /** Loaded from config.tenantPolicyFile by the entry point. */
  tenantPolicies?: TenantPolicyConfig;
  planner?: Planner;
  /** Overrides config.operatorScopes with a reader (the operators file, re-read on every policy load). */
  operatorScopes?: OperatorScopes | (() => Promise<OperatorScopes>);
  /**
   * Payload codecs (codec/: encryption at rest), used by the worker and by its activities' client alike; the entry
   * point reads it from the environment (dataConverterFromEnv). Plain payloads when absent.
   */
  dataConverter?: DataConverter;
  /** The durable action ledger (ledger/; the entry point opens RETRYSAFE_LEDGER and migrates it). */
  ledger: ActionLedger;
  /**
   * The SDK's worker tuning (slots, cache size, pollers), passed to Worker.create as given. What the engine
   * itself sets (queue, workflows, activities, converter) cannot be overridden here.
   */
  tuning?: WorkerTuning;
  /** Plugins that go before retrysafe's (tracing's OpenTelemetryPlugin: the engine's client takes its interceptors). */
  plugins?: WorkerPlugin[];
}

/** Worker.create's options that tune a worker without changing what it runs. */
export type WorkerTuning = Omit<
  WorkerOptions,
  | 'connection'
  | 'namespace'
  | 'taskQueue'
  | 'workflowsPath'
  | 'workflowBundle'
  | 'activities'
  | 'dataConverter'
  | 'identity'
  | 'interceptors'
  | 'sinks'
  | 'plugins'
>;

/**
 * A worker with the engine: Worker.create with retrysafePlugin (workers/plugin.ts) over the application's tools,
 * its own activities and workflow module beside the engine's. The plugin checks the worker's settings against its
 * stack's before it starts (StackSettingsMismatch).
 */
export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    ...opts.tuning,
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.config.taskQueue,
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : { workflowsPath: opts.workflowsPath ?? require.resolve('../workflows') }),
    ...(opts.activities ? { activities: opts.activities } : {}),
    ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
    plugins: [
      ...(opts.plugins ?? []),
      retrysafePlugin({
        tools: opts.tools,
        trustedApprovalKeys: opts.config.trustedApprovalKeys,
        operatorScopes: opts.operatorScopes ?? opts.config.operatorScopes,
        crashAt: opts.config.crashAt,
        ...(opts.config.leaseClockOffsetMs ? { leaseClockOffsetMs: opts.config.leaseClockOffsetMs } : {}),
        metrics: metricsOptionsOf(opts.config),
        ...(opts.onCrash ? { onCrash: opts.onCrash } : {}),
        ...(opts.tenantPolicies ? { tenantPolicies: opts.tenantPolicies } : {}),
        ...(opts.planner ? { planner: opts.planner } : {}),
        ledger: opts.ledger,
      }),
    ],
  });
}
