/**
 * A downstream agent with an interlock: it announces dispatch to the customer only once the upstream
 * charge (owned by another run) is confirmed. While the charge is planned, dispatching, unknown or in
 * needs_review, this run waits — visibly, in RetrysafeWaitingOn and its status query — and never
 * guesses. A failed or compensated charge means no announcement at all.
 *
 *   watch(charge:v1:acme:<event>) ──confirmed──▶ act(send-email, step dispatch-notice) ─▶ announced
 *                │ failed / compensated
 *                └─▶ not announced
 */
import type { ExampleTools } from '../tools';
import { ActionRun, parseActionKey, toolRefs } from 'retrysafe/workflow';

const tools = toolRefs<ExampleTools>();

export interface FulfillmentInput {
  tenant: string;
  eventId: string;
  /** The action that must be confirmed first, e.g. `charge:v1:acme:renewal-2026-08-28-01`. */
  upstreamKey: string;
  customerEmail: string;
  orderId: string;
}

export interface FulfillmentResult {
  announced: boolean;
  upstreamStatus: string;
  emailKey?: string;
  messageId?: string;
}

export const FULFILLMENT_AGENT = 'fulfillment';

export async function fulfillmentAgentWorkflow(input: FulfillmentInput): Promise<FulfillmentResult> {
  const run = new ActionRun(
    { ...input, agent: FULFILLMENT_AGENT },
    () => `fulfillment of ${input.orderId} after ${input.upstreamKey}`,
  );
  parseActionKey(input.upstreamKey);
  run.setStage('waiting for upstream', 'waiting');

  const upstream = await run.awaitUpstream(input.upstreamKey);
  if (upstream.status !== 'confirmed') {
    run.setStage('not announced', 'not-announced');
    return { announced: false, upstreamStatus: upstream.status };
  }
  run.setStage('announcing');
  const email = await run.act(
    tools['send-email'],
    {
      to: input.customerEmail,
      subject: `Order ${input.orderId} is on its way`,
      body: `Your payment is confirmed and order ${input.orderId} has been handed to the carrier.`,
      template: 'dispatch-notice',
    },
    { step: 'dispatch-notice' },
  );
  run.setStage(
    email.status === 'confirmed' ? 'announced' : `announcement ${email.status}`,
    email.status === 'confirmed' ? 'announced' : email.status,
  );
  return {
    announced: email.status === 'confirmed',
    upstreamStatus: upstream.status,
    emailKey: email.key,
    ...(email.providerRef ? { messageId: email.providerRef } : {}),
  };
}
