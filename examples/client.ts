import type { WorkflowHandle } from '@temporalio/client';
import type { FulfillmentInput } from './workflows/fulfillment-agent';
import { FULFILLMENT_AGENT } from './workflows/fulfillment-agent';
import type { RenewalInput } from './workflows/renewal';
import { RetrysafeClient } from 'retrysafe';

/** The engine's client with starters for the example flows. */
export class ExampleClient extends RetrysafeClient {
  /**
   * Starts the renewal run for one business event, or attaches to it when it already exists. Starting
   * the same event with different input is refused (IntentMismatch), never silently attached.
   */
  async startRenewal(input: RenewalInput): Promise<WorkflowHandle> {
    return this.startRun('renewalWorkflow', input.tenant, input.eventId, input);
  }

  /**
   * Starts the fulfillment agent for an event: it waits for the upstream action (usually the charge) to be
   * confirmed before it announces dispatch to the customer.
   */
  async startFulfillment(input: FulfillmentInput): Promise<WorkflowHandle> {
    return this.startRun('fulfillmentAgentWorkflow', input.tenant, input.eventId, input, FULFILLMENT_AGENT);
  }
}
