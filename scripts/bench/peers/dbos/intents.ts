import { actionKeyFor } from '../intents';
import type { PeerChargeInput, PeerCrashInput, PeerRenewalInput } from '../types';
import { runWorkflowId } from 'retrysafe';

/** The DBOS workflow ID is the key, so a second start for the same business event attaches to the first. */
export const workflowIdFor = {
  charge: (input: PeerChargeInput) => actionKeyFor(input, 'charge'),
  renewal: (input: PeerRenewalInput) => runWorkflowId(input.tenant, input.eventId),
  crash: (input: PeerCrashInput) => actionKeyFor(input, input.target),
};
