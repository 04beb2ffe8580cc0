import { renewalChargeIntent, type RenewalInput, type RenewalResult } from '../../examples/workflows/renewal';
import { webUiWorkflowUrl } from '../../cli/dev/dev-server';
import type { Stack } from '../lib/stack';
import { errorCodeOf } from 'retrysafe';

/**
 * The renewal from the first source article, on real processes: worker-1 is SIGKILLed right after the
 * payments provider commits the charge and before the outcome is recorded; worker-2 takes over; the
 * provider is asked how many charges it holds for the key; the action is claimed again (same charge)
 * and then with ten times the amount (refused).
 */
export interface RenewalDemoOutcome {
  actionKey: string;
  runWorkflowId: string;
  status: RenewalResult['status'];
  chargeId?: string;
  providerCharges: number;
  providerRequestsForKey: number;
  workerKilled: boolean;
  /** The event was processed by an earlier `npm start` on the same dev-server database: nothing new was sent. */
  alreadyProcessed: boolean;
  reclaimedChargeId?: string;
  mismatchRejected: boolean;
  mismatchError?: string;
  actionUrl?: string;
  runUrl?: string;
  elapsedMs: number;
}

export const DEMO_RENEWAL: RenewalInput = {
  tenant: 'acme',
  eventId: 'renewal-2026-08-28-01',
  orderId: 'A-1842',
  customerId: 'cus_acme',
  paymentMethod: 'pm_7',
  amountCents: 4990,
  currency: 'usd',
  sku: 'plan-annual',
  quantity: 1,
  shipTo: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
  customerEmail: 'billing@acme.example',
};

export async function runRenewalDemo(
  stack: Stack,
  input: RenewalInput = DEMO_RENEWAL,
  say: (line: string) => void = () => undefined,
): Promise<RenewalDemoOutcome> {
  const started = Date.now();
  const worker1 = await stack.startWorker({ name: 'worker-1', crashAt: 'after-commit:charge' });
  say(`worker-1 (pid ${worker1.pid}) is up, armed to die right after the provider commits the charge`);
  const run = await stack.retrysafe.startRenewal(input);
  say(`started run ${run.workflowId}`);

  const killed = await Promise.race([worker1.exited.then(() => true), run.result().then(() => false)]);
  if (killed) say(`worker-1 was SIGKILLed after the provider committed and before the outcome was recorded`);
  else {
    say('this event was already processed earlier (persistent dev server): nothing new is sent');
    await worker1.kill();
  }
  const worker2 = await stack.startWorker({ name: 'worker-2' });
  say(`worker-2 (pid ${worker2.pid}) takes over`);
  const result = (await run.result()) as RenewalResult;
  say(`run ${result.status}: ${result.chargeId ?? result.error?.message}`);

  const ledger = await stack.providers.payments.ledger();
  const charges = (ledger.records.charges ?? []) as Array<{ id: string; idempotencyKey?: string }>;
  const forKey = charges.filter((c) => c.idempotencyKey === result.actionKey);
  const requestsForKey = ledger.requests.filter((r) => r.idempotencyKey === result.actionKey).length;
  say(`payments provider holds ${forKey.length} charge(s) for ${result.actionKey} after ${requestsForKey} request(s)`);

  const intent = renewalChargeIntent(input);
  const again = await stack.retrysafe.claimAction({ tenant: input.tenant, eventId: input.eventId }, intent);
  say(`claiming the action again returns ${again.providerRef} (status ${again.status})`);

  let mismatchError: string | undefined;
  try {
    await stack.retrysafe.claimAction(
      { tenant: input.tenant, eventId: input.eventId },
      { ...intent, amountCents: input.amountCents * 10 },
    );
  } catch (err) {
    if (errorCodeOf(err) !== 'IntentMismatch') throw err;
    mismatchError = (err as Error).message;
  }
  say(
    mismatchError
      ? `the same key with ${input.amountCents * 10} cents is refused: ${mismatchError}`
      : 'WARNING: the mismatched claim was accepted',
  );

  return {
    actionKey: result.actionKey,
    runWorkflowId: run.workflowId,
    status: result.status,
    ...(result.chargeId ? { chargeId: result.chargeId } : {}),
    providerCharges: forKey.length,
    providerRequestsForKey: requestsForKey,
    workerKilled: killed,
    alreadyProcessed: !killed,
    ...(again.providerRef ? { reclaimedChargeId: again.providerRef } : {}),
    mismatchRejected: mismatchError !== undefined,
    ...(mismatchError ? { mismatchError } : {}),
    // On the record-first path the charge settled on its ledger row in the run's own activity: no workflow to link.
    ...(webUiWorkflowUrl(stack.server, result.actionKey) && (await workflowExists(stack, result.actionKey))
      ? { actionUrl: webUiWorkflowUrl(stack.server, result.actionKey) }
      : {}),
    ...(webUiWorkflowUrl(stack.server, run.workflowId)
      ? { runUrl: webUiWorkflowUrl(stack.server, run.workflowId) }
      : {}),
    elapsedMs: Date.now() - started,
  };
}

async function workflowExists(stack: Stack, workflowId: string): Promise<boolean> {
  try {
    await stack.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch {
    return false;
  }
}
