import { connectClient, RetrysafeClient, runWorkflowId } from 'retrysafe';
import { tools } from './tools';
import { announce } from './workflows';

// node --env-file=.retrysafe/dev.env dist/client.js EVENT TEXT [--run]
// claims the action post-message for EVENT and waits for its outcome; with --run it starts the announce workflow
// for EVENT instead, whose step posts the message
async function main(): Promise<void> {
  const [eventId = 'launch-1', text = 'We are live', how] = process.argv.slice(2);
  const { client, connection } = await connectClient(); // reads the same settings as the worker
  const taskQueue = process.env.RETRYSAFE_TASK_QUEUE ?? 'retrysafe';
  if (how === '--run') {
    const status = await client.workflow.execute(announce, {
      taskQueue,
      workflowId: runWorkflowId('acme', eventId),
      args: [{ tenant: 'acme', eventId, text }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    console.log(JSON.stringify({ workflow: 'announce', status }));
  } else {
    const retrysafe = new RetrysafeClient(client, { tools, taskQueue });
    const action = await retrysafe.claimAction(
      { tenant: 'acme', eventId },
      { operation: 'post-message', channel: 'launch', text },
      { wait: true },
    ); // the same action however often it is claimed: { key: 'post-message:v1:acme:launch-1', status, providerRef }
    console.log(JSON.stringify({ key: action.key, status: action.status, providerRef: action.providerRef }));
  }
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
