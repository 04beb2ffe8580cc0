import assert from 'node:assert/strict';
import type { ActionResult, RefusalResult } from '../../adapters/action-result';
import type { Stack } from '../../scripts/lib/stack';
import { countForKey } from './ledger';
import { uniqueEvent } from './renewal-input';

/** One agent turn in which the model calls `charge` with these arguments; the tool's result as the model saw it. */
export type AgentTurn = (eventId: string, args: Record<string, unknown>) => Promise<ActionResult & RefusalResult>;

export const chargeArguments = (eventId: string, amountCents: number) => ({
  amountCents,
  currency: 'usd',
  customerId: 'cus_acme',
  paymentMethod: 'pm_7',
  merchantReference: `ord-${eventId}`,
});

/**
 * The crash case every agent adapter must pass: the first turn's charge runs on a worker SIGKILLed after the
 * provider commits and settles on its successor; a second turn (a new tool-call ID) for the same event returns
 * the first outcome; a changed amount is refused as a result; the provider holds one charge.
 */
export async function assertOneChargeAcrossCrash(stack: Stack, label: string, turn: AgentTurn): Promise<void> {
  const eventId = uniqueEvent(label);
  const doomed = await stack.startWorker({ name: `doomed-${label}`, crashAt: 'after-commit:charge' });
  const first = turn(eventId, chargeArguments(eventId, 1_990));
  assert.equal((await doomed.exited).signal, 'SIGKILL', 'the worker died right after the provider committed');
  const successor = await stack.startWorker({ name: `successor-${label}` });
  try {
    const outcome = await first;
    assert.equal(outcome.status, 'confirmed', JSON.stringify(outcome));
    assert.match(outcome.key, /^charge:v1:acme:/);

    const again = await turn(eventId, chargeArguments(eventId, 1_990));
    assert.deepEqual(
      [again.status, again.key, again.providerRef],
      [outcome.status, outcome.key, outcome.providerRef],
      'the tool called again for the event returns the first outcome',
    );
    const changed = await turn(eventId, chargeArguments(eventId, 2_990));
    assert.equal(changed.error?.code, 'IntentMismatch', 'a changed request is refused, as a result the model reads');

    const counted = countForKey(await stack.providers.payments.ledger(), outcome.key);
    assert.deepEqual([counted.records, counted.committed], [1, 1], 'one charge at the provider');
  } finally {
    await successor.stop();
  }
}
