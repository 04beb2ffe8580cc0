/**
 * The subscription renewal from the first source article, as a saga of keyed actions. The run's workflow
 * ID is `run:<tenant>:<eventId>`; every key is derived from it, so every restart and every second start
 * lands on the same actions.
 *
 *   register(release) ─▶ reserve ─▶ register(refund) ─▶ charge ─▶ create shipment ─▶ [receipt] ─▶ keep all ─▶ renewed
 *                                                                        │ fails for good
 *                                                                        └─▶ refund ─▶ release ─▶ compensated
 *
 * The refund is registered before the charge because a charge can half-succeed (reply lost, then an
 * operator's "compensate"): the undo then looks up what happened before refunding it.
 */
import {
  ApplicationFailure,
  defineQuery,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { runWorkflowId } from '../policies/action-key';
import type { ChargeIntent, CreateShipmentIntent, ReserveIntent } from '../policies/intents';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { act, currentlyWaitingOn, keyFor, knownActions, lookUpAction } from './act';
import type { EffectSnapshot } from './effect-api';
import { Saga, type CompensationResult } from './saga';

export interface RenewalInput {
  tenant: string;
  eventId: string;
  orderId: string;
  customerId: string;
  paymentMethod: string;
  amountCents: number;
  currency: string;
  sku: string;
  quantity: number;
  shipTo: CreateShipmentIntent['address'];
  /** Where the receipt goes (runs started after the 'renewal-receipt-email' patch). */
  customerEmail?: string;
}

export interface RenewalResult {
  status: 'renewed' | 'failed' | 'compensated' | 'needs_review';
  actionKey: string;
  chargeId?: string;
  reservationId?: string;
  shipmentId?: string;
  receiptId?: string;
  compensations?: CompensationResult[];
  error?: { code: string; message: string };
}

export interface RunStatus {
  stage: string;
  waitingOn?: string;
  actions: Array<Pick<EffectSnapshot, 'key' | 'status' | 'summary' | 'providerRef'>>;
}

export const runStatusQuery = defineQuery<RunStatus>('retrysafe.runStatus');

/** The charge a renewal proposes; application code claiming the same action must propose exactly this. */
export function renewalChargeIntent(input: RenewalInput): ChargeIntent {
  return {
    operation: 'charge',
    amountCents: input.amountCents,
    currency: input.currency,
    customerId: input.customerId,
    paymentMethod: input.paymentMethod,
    merchantReference: input.orderId,
  };
}

/**
 * The receipt email was added after renewals had already run. Runs recorded before it (and still
 * replaying) did not send one, so the step is behind this patch: old histories take the old path, new
 * runs send the receipt. test/replay shows that the same change without the patch breaks replay.
 */
export const RECEIPT_PATCH = 'renewal-receipt-email';

/** Builds the renewal workflow with the gate for the receipt step (the real one is `patched`). */
export function makeRenewalWorkflow(receiptGate: () => boolean) {
  return (input: RenewalInput) => renewal(input, receiptGate);
}

export const renewalWorkflow = makeRenewalWorkflow(() => patched(RECEIPT_PATCH));

async function renewal(input: RenewalInput, receiptGate: () => boolean): Promise<RenewalResult> {
  const expectedId = runWorkflowId(input.tenant, input.eventId);
  if (workflowInfo().workflowId !== expectedId) {
    throw ApplicationFailure.nonRetryable(`a renewal for ${input.tenant}/${input.eventId} must run as ${expectedId}`, 'InvalidIntent');
  }
  let stage = 'reserving';
  setHandler(runStatusQuery, () => ({
    stage,
    waitingOn: currentlyWaitingOn(),
    actions: knownActions().map(({ key, status, summary, providerRef }) => ({ key, status, summary, providerRef })),
  }));
  const setStage = (next: string) => {
    stage = next;
    setCurrentDetails(`**${next}** · renewal of ${input.orderId} for ${input.tenant}: ${(input.amountCents / 100).toFixed(2)} ${input.currency.toUpperCase()}`);
    upsertSearchAttributes([{ key: SA_STATUS, value: next }]);
  };
  upsertSearchAttributes([
    { key: SA_KIND, value: 'run' },
    { key: SA_TENANT, value: input.tenant },
    { key: SA_STATUS, value: stage },
  ]);

  const saga = new Saga();
  const reserve: ReserveIntent = { operation: 'reserve', sku: input.sku, quantity: input.quantity, orderId: input.orderId };
  const charge = renewalChargeIntent(input);
  const chargeKey = keyFor('charge');

  saga.addCompensation({
    forKey: keyFor('reserve'),
    build: async (step) => {
      const reservationId = step?.providerRef ?? (await lookUpAction(keyFor('reserve'), reserve)).providerRef;
      return reservationId ? { operation: 'release', reservationId } : undefined;
    },
  });
  const reserved = await act(reserve);
  if (reserved.status !== 'confirmed') return undo(reserved);

  setStage('charging');
  saga.addCompensation({
    forKey: chargeKey,
    build: async (step) => {
      const chargeId = step?.providerRef ?? (await lookUpAction(chargeKey, charge)).providerRef;
      return chargeId ? { operation: 'refund', chargeId, amountCents: input.amountCents, merchantReference: input.orderId } : undefined;
    },
  });
  const charged = await act(charge);
  if (charged.status !== 'confirmed') return undo(charged);

  setStage('shipping');
  const shipped = await act({
    operation: 'create-shipment',
    shipmentRef: `${input.orderId}-ship`,
    orderId: input.orderId,
    address: input.shipTo,
  });
  if (shipped.status !== 'confirmed') return undo(shipped);

  let receiptId: string | undefined;
  if (input.customerEmail && receiptGate()) {
    setStage('sending receipt');
    const receipt = await act(
      {
        operation: 'send-email',
        to: input.customerEmail,
        subject: `Receipt for order ${input.orderId}`,
        body: `We charged ${(input.amountCents / 100).toFixed(2)} ${input.currency.toUpperCase()} for the renewal of order ${input.orderId}.`,
        template: 'renewal-receipt',
      },
      { stepId: 'receipt' },
    );
    receiptId = receipt.providerRef;
  }

  await saga.keepAll();
  setStage('renewed');
  return {
    status: 'renewed',
    actionKey: chargeKey,
    chargeId: charged.providerRef,
    reservationId: reserved.providerRef,
    shipmentId: shipped.providerRef,
    ...(receiptId ? { receiptId } : {}),
  };

  /** A step failed for good (or an operator chose to compensate it): undo what was done, newest first. */
  async function undo(failed: EffectSnapshot): Promise<RenewalResult> {
    setStage('compensating');
    const compensations = await saga.compensate();
    const stuck = compensations.some((c) => c.status === 'needs_review');
    const didSomething = compensations.some((c) => c.status === 'compensated');
    const status = stuck ? 'needs_review' : didSomething ? 'compensated' : 'failed';
    setStage(status);
    const chargeId = knownActions().find((a) => a.key === chargeKey)?.providerRef;
    return {
      status,
      actionKey: chargeKey,
      ...(chargeId ? { chargeId } : {}),
      compensations,
      error: failed.error ?? { code: failed.status, message: `${failed.key} ended ${failed.status}` },
    };
  }
}
