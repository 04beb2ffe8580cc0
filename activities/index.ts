import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import type { ToolRegistry } from '../policies/tool-registry';
import type { ActionLedger } from '../ledger';
import { createClaimActionActivity } from './claim-action';
import { createActOnRecordActivity } from './act-on-record';
import { createSettleRecord } from './settle-record';
import { createRecordLedger } from './record-ledger';
import type { CrashHook } from './crash-points';
import { noCrashes } from './crash-points';
import type { LeaseClock } from './lease-clock';
import { createExecuteAction } from './execute-action';
import { createLoadActionPolicy } from './load-action-policy';
import { createLookupAction } from './lookup-action';
import { createPlanActivity } from './planners/plan-activity';
import type { Planner } from './planners/planner';
import { createPrepareAction } from './prepare-action';
import { createPrepareAndAct } from './prepare-and-act';
import { createWatchAction } from './watch-action';
import type { RetrysafeMetrics } from '../metrics/instruments';

export interface ActivityDeps {
  client: Client;
  /** The task queue action workflows run on. */
  taskQueue: string;
  /** The tools this worker runs (createToolRegistry). */
  tools: ToolRegistry;
  crash?: CrashHook;
  /** The clock row leases are written and judged by (activities/lease-clock.ts); the machine's by default. */
  leaseClock?: LeaseClock;
  tenantPolicies?: TenantPolicyConfig;
  trustedApprovalKeys?: Record<string, string>;
  /** Operators' tenants and roles (the operators file), for signed decisions. */
  operatorScopes?: OperatorScopes | (() => Promise<OperatorScopes>);
  /** The model (or script) agent runs plan with; agent runs fail with NoPlanner without one. */
  planner?: Planner;
  /**
   * The durable action ledger (ledger/): each action's row is its only record. A run's act takes the row and
   * acts on it; an action workflow takes it over before it acts; claims, lookups and `getAction` read it.
   */
  ledger: ActionLedger;
  /** What the activities count (metrics/instruments.ts); nothing when absent. */
  metrics?: RetrysafeMetrics;
}

/** The engine's activities, built from their dependencies so tests pass real providers or fakes without mocking modules. */
export function createActivities(deps: ActivityDeps) {
  const metrics = deps.metrics ? { metrics: deps.metrics } : {};
  const policy = createLoadActionPolicy(deps);
  const executeAction = createExecuteAction({
    tools: deps.tools,
    crash: deps.crash ?? noCrashes,
    ...metrics,
    ledger: deps.ledger,
    volatilePolicy: (tenant) => policy.loadVolatilePolicy({ tenant }),
  });
  const claimDeps = {
    client: deps.client,
    taskQueue: deps.taskQueue,
    tools: deps.tools,
    ledger: deps.ledger,
  };
  const actOnRecord = createActOnRecordActivity({
    ...claimDeps,
    execute: executeAction,
    crash: deps.crash ?? noCrashes,
    ...(deps.tenantPolicies ? { tenantPolicies: deps.tenantPolicies } : {}),
    ...(deps.leaseClock ? { leaseClock: deps.leaseClock } : {}),
    ...metrics,
  });
  const prepare = createPrepareAction({ tools: deps.tools, tenantPolicies: deps.tenantPolicies });
  return {
    executeAction,
    lookupAction: createLookupAction({ tools: deps.tools, ...metrics }),
    claimAction: createClaimActionActivity(claimDeps),
    actOnRecord,
    prepareAndAct: createPrepareAndAct({ prepareAction: prepare.prepareAction, actOnRecord }),
    ...createSettleRecord({ ledger: deps.ledger, ...metrics }),
    ...policy,
    ...createRecordLedger({
      ledger: deps.ledger,
      ...metrics,
      ...(deps.leaseClock ? { leaseClock: deps.leaseClock } : {}),
    }),
    watchAction: createWatchAction({ client: deps.client, ledger: deps.ledger }),
    ...prepare,
    planNextAction: deps.planner
      ? createPlanActivity({ planner: deps.planner, tools: deps.tools })
      : async (): Promise<never> => {
          throw ApplicationFailure.nonRetryable(
            'this worker has no planner: pass `planner` to createWorker to run agent runs',
            'NoPlanner',
          );
        },
  };
}

export type { ExecuteInput, ExecuteOutcome } from './execute-action';
export type { LookupResult } from './lookup-action';
export type { ClaimActionInput } from './claim-action';
export type { LedgerClaim } from './record-ledger';
export type { ActOnRecordInput, ActOnRecordResult } from './act-on-record';
export type { ActionPolicy, VolatilePolicy } from './load-action-policy';
export type { PreparedAction } from './prepare-action';
