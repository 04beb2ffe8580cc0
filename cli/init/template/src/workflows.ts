import { ActionRun } from 'retrysafe/workflow';

export { actionWorkflowV3 } from 'retrysafe/workflow';

export async function announce(input: { tenant: string; eventId: string; text: string }): Promise<string> {
  const run = new ActionRun(input); // runs as `run:<tenant>:<eventId>`: a second start finds the same actions
  const posted = await run.act({ operation: 'post-message', channel: 'launch', text: input.text });
  return posted.status;
}
