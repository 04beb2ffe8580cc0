import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { watchUpdate, type ActionSnapshot } from '../messages/action';

/**
 * Subscribes a downstream run to an upstream action it does not own. Until the upstream action has been
 * claimed by its owner the watch is retried (the downstream run simply waits); a closed action answers
 * with its recorded outcome.
 */
export function createWatchAction(deps: { client: Client }) {
  return async function watchAction(input: { key: string; watcher: string }): Promise<ActionSnapshot> {
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
