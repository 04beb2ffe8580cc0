import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/** Whether the server knows a workflow by this ID (running or closed): an action that never got a workflow has none. */
export async function workflowExists(client: Client, id: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
