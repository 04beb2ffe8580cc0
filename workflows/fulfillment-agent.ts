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
import { ApplicationFailure, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { parseActionKey, runWorkflowId } from '../policies/action-key';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { act, awaitUpstream, currentlyWaitingOn, knownActions } from './act';
import { runStatusQuery } from './renewal';

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
  const expectedId = runWorkflowId(input.tenant, input.eventId, FULFILLMENT_AGENT);
  if (workflowInfo().workflowId !== expectedId) {
    throw ApplicationFailure.nonRetryable(`the fulfillment agent for ${input.tenant}/${input.eventId} must run as ${expectedId}`, 'InvalidIntent');
  }
  parseActionKey(input.upstreamKey);
  let stage = 'waiting for upstream';
  setHandler(runStatusQuery, () => ({
    stage,
    waitingOn: currentlyWaitingOn(),
    actions: knownActions().map(({ key, status, summary, providerRef }) => ({ key, status, summary, providerRef })),
  }));
  upsertSearchAttributes([
    { key: SA_KIND, value: 'run' },
    { key: SA_TENANT, value: input.tenant },
    { key: SA_STATUS, value: 'waiting' },
  ]);

  const upstream = await awaitUpstream(input.upstreamKey);
  if (upstream.status !== 'confirmed') {
    stage = 'not announced';
    upsertSearchAttributes([{ key: SA_STATUS, value: 'not-announced' }]);
    return { announced: false, upstreamStatus: upstream.status };
  }
  stage = 'announcing';
  const email = await act(
    {
      operation: 'send-email',
      to: input.customerEmail,
      subject: `Order ${input.orderId} is on its way`,
      body: `Your payment is confirmed and order ${input.orderId} has been handed to the carrier.`,
      template: 'dispatch-notice',
    },
    { stepId: 'dispatch-notice' },
  );
  stage = email.status === 'confirmed' ? 'announced' : `announcement ${email.status}`;
  upsertSearchAttributes([{ key: SA_STATUS, value: email.status === 'confirmed' ? 'announced' : email.status }]);
  return {
    announced: email.status === 'confirmed',
    upstreamStatus: upstream.status,
    emailKey: email.key,
    ...(email.providerRef ? { messageId: email.providerRef } : {}),
  };
}
