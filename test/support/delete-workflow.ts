import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { waitUntil } from './wait';

/**
 * Deletes a workflow as `temporal workflow delete` does (and as the namespace's retention does, later), and waits
 * until it is gone. On the dev server a closed workflow's deletion waits for its queues' acknowledgements: start
 * the stack with FAST_DELETION_DYNAMIC_CONFIG, or expect about 32 s.
 */
export async function deleteWorkflow(client: Client, namespace: string, workflowId: string): Promise<void> {
  await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId } });
  await waitUntil(`workflow ${workflowId} to be deleted`, async () => {
    try {
      await client.workflow.getHandle(workflowId).describe();
      return false;
    } catch (err) {
      return err instanceof WorkflowNotFoundError;
    }
  });
}
