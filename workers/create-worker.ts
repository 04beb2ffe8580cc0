import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { killAt } from '../activities/crash-points';
import type { WorkerConfig } from './config';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import type { Planner } from '../activities/planners/planner';

/**
 * Worker tuning. After a SIGKILL, the dead worker's workflow tasks wait out the sticky queue's
 * schedule-to-start timeout before going to the normal queue: 2 s keeps recovery inside seconds.
 */
export const STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT = '2s';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  config: WorkerConfig;
  /** Extra activities (planners, reads) added by later modules or tests. */
  extraActivities?: Record<string, (...args: never[]) => unknown>;
  workflowBundle?: WorkerOptions['workflowBundle'];
  onCrash?: (point: string, operation: string) => void;
  identity?: string;
  /** Loaded from config.tenantPolicyFile by the entry point. */
  tenantPolicies?: TenantPolicyConfig;
  planner?: Planner;
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  // NativeConnection is a ConnectionLike: the claim activity's client shares the worker's connection.
  const client = new Client({ connection: opts.connection, namespace: opts.namespace });
  const deps: ActivityDeps = {
    client,
    taskQueue: opts.config.taskQueue,
    providerUrls: opts.config.providerUrls,
    crash: killAt(opts.config.crashAt, opts.onCrash),
    tenantPolicies: opts.tenantPolicies,
    trustedApprovalKeys: opts.config.trustedApprovalKeys,
    planner: opts.planner,
  };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.config.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: { ...createActivities(deps), ...(opts.extraActivities ?? {}) },
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT,
    ...(opts.identity ? { identity: opts.identity } : {}),
  });
}
