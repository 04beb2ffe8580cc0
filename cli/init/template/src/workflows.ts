import { ActionRun, toolRefs } from 'retrysafe/workflow';
import type { tools as announceTools } from './tools';

export { actionWorkflowV3 } from 'retrysafe/workflow';

// Typed refs to the tools (type-only import: tool modules never load in the workflow sandbox).
const tools = toolRefs<typeof announceTools>();

export async function announce(input: { tenant: string; eventId: string; text: string }): Promise<string> {
  const run = new ActionRun(input); // runs as `run:<tenant>:<eventId>`: a second start finds the same actions
  const posted = await run.act(tools['post-message'], { channel: 'launch', text: input.text });
  return posted.status;
}
