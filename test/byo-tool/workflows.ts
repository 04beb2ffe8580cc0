/**
 * The user's workflow module: the engine's workflows beside one flow of their own, built on ActionRun.
 *
 *   record-entry ─▶ post-chat-message (step announce) ─▶ done
 *                          │ rejected
 *                          └─▶ compensate: void-entry (its own key) ─▶ compensated
 */
import { workflowInfo } from '@temporalio/workflow';
import { ActionRun, parseRunWorkflowId, toolRefs, type CompensationResult } from 'retrysafe/workflow';
import type { byoTools } from './tools';

export { actionWorkflowV3, agentRunWorkflowV3 } from 'retrysafe/workflow';

const tools = toolRefs<ReturnType<typeof byoTools>>();

export interface PayoutInput {
  account: string;
  amountCents: number;
  channel: string;
  /** The step the entry is recorded at; the tool's name (the default) when absent. */
  entryStep?: string;
}

export async function payoutWorkflow(
  input: PayoutInput,
): Promise<{ status: string; entry?: string; message?: string; compensations?: CompensationResult[] }> {
  const run = new ActionRun(parseRunWorkflowId(workflowInfo().workflowId));
  const entry = await run.act(
    tools['record-entry'],
    { account: input.account, amountCents: input.amountCents },
    input.entryStep ? { step: input.entryStep } : {},
  );
  if (entry.status !== 'confirmed') return { status: entry.status };
  const message = await run.act(
    tools['post-chat-message'],
    { channel: input.channel, text: `Paid ${input.amountCents} to ${input.account}` },
    { step: 'announce' },
  );
  if (message.status !== 'confirmed')
    return { status: 'compensated', entry: entry.providerRef, compensations: await run.compensate() };
  await run.keepAll();
  return { status: 'done', entry: entry.providerRef, message: message.providerRef };
}
