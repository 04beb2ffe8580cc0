import { FULFILLMENT_AGENT, fulfillmentAgentWorkflow, type FulfillmentInput } from './workflows/fulfillment-agent';
import type { RenewalInput, renewalWorkflow } from './workflows/renewal';
import { RetrysafeClient, type StartedRun } from 'retrysafe';

/** The engine's client with starters for the example flows. */
export class ExampleClient extends RetrysafeClient {
  /**
   * Starts the renewal run for one business event, or attaches to it when it already exists. Starting
   * the same event with different input is refused (IntentMismatch), never silently attached.
   */
  async startRenewal(input: RenewalInput): Promise<StartedRun<typeof renewalWorkflow>> {
    // renewalWorkflow is built by makeRenewalWorkflow (its function has no name): named by type, typed by typeof.
    return this.startRun<typeof renewalWorkflow>('renewalWorkflow', {
      tenant: input.tenant,
      eventId: input.eventId,
      input,
    });
  }

  /**
   * Starts the fulfillment agent for an event: it waits for the upstream action (usually the charge) to be
   * confirmed before it announces dispatch to the customer.
   */
  async startFulfillment(input: FulfillmentInput): Promise<StartedRun<typeof fulfillmentAgentWorkflow>> {
    return this.startRun(fulfillmentAgentWorkflow, {
      tenant: input.tenant,
      eventId: input.eventId,
      input,
      agent: FULFILLMENT_AGENT,
    });
  }
}
