import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { watchUpdate, type ActionSnapshot } from '../messages/action';
import type { ActionLedger } from '../ledger';
import { isFinal } from '../policies/action-status';
import { snapshotFromLedger } from './claim-action';

/**
 * Subscribes a downstream run to an upstream action it does not own. The action's ledger row answers first: a
 * settled row is the outcome. Otherwise the watcher subscribes to the action workflow; until there is one (the
 * owner has not claimed yet, or its run is acting on the row now) the watch is retried and the downstream run
 * simply waits.
 */
export function createWatchAction(deps: { client: Client; ledger: ActionLedger }) {
  return async function watchAction(input: { key: string; watcher: string }): Promise<ActionSnapshot> {
    const settled = await deps.ledger.get(input.key);
    if (settled && isFinal(settled.status)) return snapshotFromLedger(deps.ledger, settled);
    const handle = deps.client.workflow.getHandle(input.key);
    try {
      const description = await handle.describe();
      if (description.status.name === 'COMPLETED') return (await handle.result()) as ActionSnapshot;
      return await handle.executeUpdate(watchUpdate, {
        args: [{ watcher: input.watcher }],
        updateId: `watch:${input.watcher}`,
      });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        // No workflow: the action may live on its ledger row alone (its run acts on the record), settled or in flight.
        const row = await deps.ledger.get(input.key);
        if (row && isFinal(row.status)) return snapshotFromLedger(deps.ledger, row);
        if (row) {
          throw ApplicationFailure.retryable(
            `upstream action ${input.key} is ${row.status} on its ledger row; waiting for its outcome`,
            'UpstreamInFlight',
          );
        }
        throw ApplicationFailure.retryable(
          `upstream action ${input.key} has not been claimed yet`,
          'UpstreamNotClaimed',
        );
      }
      if (err instanceof WorkflowUpdateFailedError) throw err;
      throw err;
    }
  };
}
