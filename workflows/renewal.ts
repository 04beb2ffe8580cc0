/**
 * The subscription renewal from the first source article: charge the customer once for one renewal
 * event, however often workers die. The run's workflow ID is `run:<tenant>:<eventId>`; the charge's key
 * is derived from it, so every restart and every second start lands on the same action.
 *
 *   start(run:acme:renewal-2026-08-28-01) ─▶ act(charge 4990) ─▶ key charge:v1:acme:renewal-2026-08-28-01
 *        ─▶ confirmed ─▶ settle(kept) ─▶ { chargeId }
 */
import { ApplicationFailure, defineQuery, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { runWorkflowId } from '../policies/action-key';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { act, currentlyWaitingOn, knownActions, settle } from './act';
import type { EffectSnapshot } from './effect-api';

export interface RenewalInput {
  tenant: string;
  eventId: string;
  orderId: string;
  customerId: string;
  paymentMethod: string;
  amountCents: number;
  currency: string;
}

export interface RenewalResult {
  status: 'renewed' | 'failed' | 'needs_review';
  actionKey: string;
  chargeId?: string;
  error?: { code: string; message: string };
}

export interface RunStatus {
  stage: string;
  waitingOn?: string;
  actions: Array<Pick<EffectSnapshot, 'key' | 'status' | 'summary' | 'providerRef'>>;
}

export const runStatusQuery = defineQuery<RunStatus>('retrysafe.runStatus');

export async function renewalWorkflow(input: RenewalInput): Promise<RenewalResult> {
  const expectedId = runWorkflowId(input.tenant, input.eventId);
  if (workflowInfo().workflowId !== expectedId) {
    throw ApplicationFailure.nonRetryable(`a renewal for ${input.tenant}/${input.eventId} must run as ${expectedId}`, 'InvalidIntent');
  }
  let stage = 'charging';
  setHandler(runStatusQuery, () => ({
    stage,
    waitingOn: currentlyWaitingOn(),
    actions: knownActions().map(({ key, status, summary, providerRef }) => ({ key, status, summary, providerRef })),
  }));
  upsertSearchAttributes([
    { key: SA_KIND, value: 'run' },
    { key: SA_TENANT, value: input.tenant },
    { key: SA_STATUS, value: 'running' },
  ]);

  const charge = await act({
    operation: 'charge',
    amountCents: input.amountCents,
    currency: input.currency,
    customerId: input.customerId,
    paymentMethod: input.paymentMethod,
    merchantReference: input.orderId,
  });
  if (charge.status === 'confirmed') await settle(charge.key, { state: 'kept' });
  stage = charge.status === 'confirmed' ? 'renewed' : 'failed';
  upsertSearchAttributes([{ key: SA_STATUS, value: stage }]);
  return {
    status: charge.status === 'confirmed' ? 'renewed' : 'failed',
    actionKey: charge.key,
    ...(charge.providerRef ? { chargeId: charge.providerRef } : {}),
    ...(charge.error ? { error: charge.error } : {}),
  };
}
