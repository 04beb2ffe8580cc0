import { connectClient, RetrysafeClient, runWorkflowId } from 'retrysafe';
import { tools } from './tools';
import { announce } from './workflows';

/** `node claim.js action EVENT TEXT` claims the action itself; `node claim.js run EVENT TEXT` runs `announce`. */
async function main(): Promise<void> {
  const [how, eventId, text] = process.argv.slice(2);
  const { client, connection } = await connectClient();
  const taskQueue = process.env.RETRYSAFE_TASK_QUEUE ?? 'retrysafe';
  if (how === 'run') {
    const workflowId = runWorkflowId('acme', eventId);
    const status = await client.workflow.execute(announce, {
      taskQueue,
      workflowId,
      args: [{ tenant: 'acme', eventId, text }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    console.log(JSON.stringify({ status }));
  } else {
    const retrysafe = new RetrysafeClient(client, { tools, taskQueue });
    const where = { tenant: 'acme', eventId };
    const action = await retrysafe.claimAction(where, { operation: 'post-message', channel: 'launch', text }, { wait: true });
    console.log(JSON.stringify({ key: action.key, status: action.status, providerRef: action.providerRef }));
  }
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
