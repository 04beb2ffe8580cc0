import type { Client } from '@temporalio/client';
import type { CrashHook } from './crash-points';
import { noCrashes } from './crash-points';
import { createClaimActionActivity } from './claim-action';
import { createDispatchEffect } from './dispatch-effect';
import { createLookupEffect } from './lookup-effect';
import type { ProviderUrls } from './providers';

export interface ActivityDeps {
  client: Client;
  /** The task queue action workflows run on. */
  taskQueue: string;
  providerUrls: ProviderUrls;
  crash?: CrashHook;
}

/** All activities, built from their dependencies so tests pass real providers or fakes without mocking modules. */
export function createActivities(deps: ActivityDeps) {
  return {
    dispatchEffect: createDispatchEffect({ providerUrls: deps.providerUrls, crash: deps.crash ?? noCrashes }),
    lookupEffect: createLookupEffect({ providerUrls: deps.providerUrls }),
    claimAction: createClaimActionActivity({ client: deps.client, taskQueue: deps.taskQueue }),
  };
}

export type { DispatchInput, DispatchOutcome } from './dispatch-effect';
export type { LookupResult } from './lookup-effect';
export type { ClaimActionInput } from './claim-action';
