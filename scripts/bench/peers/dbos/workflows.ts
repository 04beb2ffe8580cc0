import { DBOS } from '@dbos-inc/dbos-sdk';
import type { PeerChargeInput, PeerCrashInput, PeerRenewalInput, PeerRenewalResult } from '../types';
import { actionKeyFor, chargeIntent, crashIntent, reserveIntent, shipmentIntent } from '../intents';
import { workflowIdFor } from './intents';
import { keyedStep } from './keyed-step';
import { WORKFLOW_NAMES } from './settings';
import type { ToolRegistry } from 'retrysafe';
import type { CrashHook } from 'retrysafe/testing';

/**
 * The bench's three workflows, registered with DBOS before launch (recovery finds a workflow by its registered
 * name). Each side effect is one step; the keys come from the input, the same way the bench computed the
 * workflow ID, so a recovered run sends the very same keys.
 */
export function registerBenchWorkflows(tools: ToolRegistry, crash: CrashHook): void {
  DBOS.registerWorkflow(
    async (input: PeerChargeInput): Promise<{ chargeId: string }> => ({
      chargeId: await keyedStep(tools, chargeIntent(input), workflowIdFor.charge(input), crash),
    }),
    { name: WORKFLOW_NAMES.charge },
  );

  DBOS.registerWorkflow(
    async (input: PeerRenewalInput): Promise<PeerRenewalResult> => {
      const key = (operation: 'reserve' | 'charge' | 'create-shipment') => actionKeyFor(input, operation);
      const reservationId = await keyedStep(tools, reserveIntent(input), key('reserve'), crash);
      const chargeId = await keyedStep(tools, chargeIntent(input), key('charge'), crash);
      const shipmentId = await keyedStep(tools, shipmentIntent(input), key('create-shipment'), crash);
      return { reservationId, chargeId, shipmentId };
    },
    { name: WORKFLOW_NAMES.renewal },
  );

  DBOS.registerWorkflow(
    async (input: PeerCrashInput): Promise<{ providerRef: string }> => ({
      providerRef: await keyedStep(tools, crashIntent(input), workflowIdFor.crash(input), crash),
    }),
    { name: WORKFLOW_NAMES.crash },
  );
}

/** What the client awaits, by workflow. */
export interface BenchWorkflowResults {
  charge: { chargeId: string };
  renewal: PeerRenewalResult;
  crash: { providerRef: string };
}
