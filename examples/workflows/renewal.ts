/**
 * The subscription renewal from the first source article, as a saga of keyed actions. The run's workflow
 * ID is `run:<tenant>:<eventId>`; every key is derived from it, so every restart and every second start
 * lands on the same actions.
 *
 *   reserve (its release registered) ─▶ charge (its refund registered) ─▶ create shipment ─▶ [receipt] ─▶ keep all ─▶ renewed
 *                                                                        │ fails for good
 *                                                                        └─▶ refund ─▶ release ─▶ compensated
 *
 * Both tools declare their undo (examples/tools), and the run registers it before claiming, because a
 * charge can half-succeed (reply lost, then an operator's "compensate"): the undo then looks up what
 * happened before refunding it.
 */
import { patched } from '@temporalio/workflow';
import type { ChargeIntent, CreateShipmentIntent, ExampleTools } from '../tools';
import { shipmentRefFor } from '../tools/references';
import { ActionRun, toolRefs, type ActionSnapshot, type CompensationResult } from 'retrysafe/workflow';

const tools = toolRefs<ExampleTools>();

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

/** The charge a renewal proposes; application code claiming the same action must propose exactly this. */
export function renewalChargeIntent(
  input: Pick<RenewalInput, 'amountCents' | 'currency' | 'customerId' | 'paymentMethod' | 'orderId'>,
): ChargeIntent {
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
  const money = `${(input.amountCents / 100).toFixed(2)} ${input.currency.toUpperCase()}`;
  const run = new ActionRun(input, () => `renewal of ${input.orderId} for ${input.tenant}: ${money}`);
  run.setStage('reserving');

  const reserved = await run.act(tools.reserve, { sku: input.sku, quantity: input.quantity, orderId: input.orderId });
  if (reserved.status !== 'confirmed') return undo(reserved);

  run.setStage('charging');
  const { operation: _charge, ...charge } = renewalChargeIntent(input);
  const charged = await run.act(tools.charge, charge);
  const chargeKey = charged.key;
  if (charged.status !== 'confirmed') return undo(charged);

  run.setStage('shipping');
  const shipped = await run.act(tools['create-shipment'], {
    // Tenant-scoped: the carrier dedupes on it across all tenants (examples/tools/references.ts).
    shipmentRef: shipmentRefFor(input.tenant, input.orderId),
    orderId: input.orderId,
    address: input.shipTo,
  });
  if (shipped.status !== 'confirmed') return undo(shipped);

  let receiptId: string | undefined;
  if (input.customerEmail && receiptGate()) {
    run.setStage('sending receipt');
    const receipt = await run.act(
      tools['send-email'],
      {
        to: input.customerEmail,
        subject: `Receipt for order ${input.orderId}`,
        body: `We charged ${money} for the renewal of order ${input.orderId}.`,
        template: 'renewal-receipt',
      },
      { step: 'receipt' },
    );
    receiptId = receipt.providerRef;
  }

  await run.keepAll();
  run.setStage('renewed');
  return {
    status: 'renewed',
    actionKey: chargeKey,
    chargeId: charged.providerRef,
    reservationId: reserved.providerRef,
    shipmentId: shipped.providerRef,
    ...(receiptId ? { receiptId } : {}),
  };

  /** A step failed for good (or an operator chose to compensate it): undo what was done, newest first. */
  async function undo(failed: ActionSnapshot): Promise<RenewalResult> {
    run.setStage('compensating');
    const compensations = await run.compensate();
    const stuck = compensations.some((c) => c.status === 'needs_review');
    const didSomething = compensations.some((c) => c.status === 'compensated');
    const status = stuck ? 'needs_review' : didSomething ? 'compensated' : 'failed';
    run.setStage(status);
    const charge = run.known().find((a) => a.operation === 'charge');
    return {
      status,
      actionKey: charge?.key ?? failed.key,
      ...(charge?.providerRef ? { chargeId: charge.providerRef } : {}),
      compensations,
      error: failed.error ?? { code: failed.status, message: `${failed.key} ended ${failed.status}` },
    };
  }
}
