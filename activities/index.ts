import type { Client } from '@temporalio/client';
import { createBareCharge } from './baseline';
import type { CrashHook } from './crash-points';
import { noCrashes } from './crash-points';
import { createClaimActionActivity } from './claim-action';
import { createDispatchEffect } from './dispatch-effect';
import { createLookupEffect } from './lookup-effect';
import type { ProviderUrls } from './providers';
import { createLoadActionPolicy } from './load-action-policy';
import { createWatchAction } from './watch-action';
import { createPlanActivity } from './planners/plan-activity';
import type { Planner } from './planners/planner';
import { renewalPlanner } from './planners/renewal-script';
import type { TenantPolicyConfig } from '../policies/tenant-policy';

export interface ActivityDeps {
  client: Client;
  /** The task queue action workflows run on. */
  taskQueue: string;
  providerUrls: ProviderUrls;
  crash?: CrashHook;
  tenantPolicies?: TenantPolicyConfig;
  trustedApprovalKeys?: Record<string, string>;
  /** The model (or script) agent runs plan with; the renewal script when absent. */
  planner?: Planner;
}

/** All activities, built from their dependencies so tests pass real providers or fakes without mocking modules. */
export function createActivities(deps: ActivityDeps) {
  return {
    dispatchEffect: createDispatchEffect({ providerUrls: deps.providerUrls, crash: deps.crash ?? noCrashes }),
    lookupEffect: createLookupEffect({ providerUrls: deps.providerUrls }),
    claimAction: createClaimActionActivity({ client: deps.client, taskQueue: deps.taskQueue }),
    bareCharge: createBareCharge({ providerUrls: deps.providerUrls, crash: deps.crash ?? noCrashes }),
    loadActionPolicy: createLoadActionPolicy(deps),
    watchAction: createWatchAction({ client: deps.client }),
    planNextAction: createPlanActivity({ planner: deps.planner ?? renewalPlanner() }),
  };
}

export type { DispatchInput, DispatchOutcome } from './dispatch-effect';
export type { LookupResult } from './lookup-effect';
export type { ClaimActionInput } from './claim-action';
export type { ActionPolicy } from './load-action-policy';
