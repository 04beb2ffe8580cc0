import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { ActionLedger } from '../ledger';
import type { NativeConnection } from '@temporalio/worker';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { killAt } from '../activities/crash-points';
import type { Planner } from '../activities/planners/planner';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import type { AnyTool } from '../policies/tool';
import { createToolRegistry, type ToolRegistry } from '../policies/tool-registry';
import type { WorkerConfig } from './config';
import { withEnginePreloads } from './workflow-preload';
import { checkStackSettings, payloadKeyIdsOf } from '../client/stack-settings';

/**
 * Worker tuning. After a SIGKILL, the dead worker's workflow tasks wait out the sticky queue's
 * schedule-to-start timeout before going to the normal queue: 2 s keeps recovery inside seconds.
 */
export const STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT = '2s';

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
  ledger?: ActionLedger;
  /**
   * The SDK's worker tuning (slots, cache size, pollers), passed to Worker.create as given. What the engine
   * itself sets (queue, workflows, activities, converter) cannot be overridden here.
   */
  tuning?: WorkerTuning;
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
>;

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const tools = 'parseIntent' in opts.tools ? opts.tools : createToolRegistry(opts.tools as readonly AnyTool[]);
  // Before anything polls: a worker that cannot read the stack's payloads, trusts none of its approval keys or
  // lacks the ledger it keeps says so now, naming the setting (StackSettingsMismatch).
  await checkStackSettings(opts.connection.workflowService, opts.namespace, {
    role: 'worker',
    payloadKeyIds: payloadKeyIdsOf(opts.dataConverter),
    approvalKeyIds: Object.keys(opts.config.trustedApprovalKeys),
    ...(opts.ledger ? { ledger: opts.ledger.kind } : {}),
  });
  // NativeConnection is a ConnectionLike: the claim activity's client shares the worker's connection.
  const dataConverter = opts.dataConverter ? { dataConverter: opts.dataConverter } : {};
  const client = new Client({ connection: opts.connection, namespace: opts.namespace, ...dataConverter });
  const deps: ActivityDeps = {
    client,
    taskQueue: opts.config.taskQueue,
    tools,
    crash: killAt(opts.config.crashAt, opts.onCrash),
    tenantPolicies: opts.tenantPolicies,
    trustedApprovalKeys: opts.config.trustedApprovalKeys,
    operatorScopes: opts.operatorScopes ?? opts.config.operatorScopes,
    planner: opts.planner,
    ...(opts.ledger ? { ledger: opts.ledger } : {}),
  };
  return Worker.create({
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT,
    ...opts.tuning,
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.config.taskQueue,
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : {
          workflowsPath: opts.workflowsPath ?? require.resolve('../workflows'),
          bundlerOptions: withEnginePreloads(opts.tuning?.bundlerOptions),
        }),
    activities: { ...(opts.activities ?? {}), ...createActivities(deps) },
    ...dataConverter,
    ...(opts.identity ? { identity: opts.identity } : {}),
  });
}
