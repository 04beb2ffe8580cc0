/**
 * Types only (tsc checks this file, nothing runs it): a typed act and a typed run start hold, and each
 * `@ts-expect-error` below fails the type-check the day the types loosen (an unused one is an error itself).
 */
import type { RetrysafeClient } from 'retrysafe';
import { ActionRun, toolRefs, type ActionSnapshot } from 'retrysafe/workflow';
import { postMessage, type tools as teamTools } from './tools';
import type { announce } from './workflows';

const tools = toolRefs<typeof teamTools>();

export async function typedActs(run: ActionRun): Promise<ActionSnapshot[]> {
  return [
    // A tool's ref and its input: checks.
    await run.act(tools['post-message'], { channel: 'launch', text: 'hello' }, { step: 'announce' }),
    // @ts-expect-error a misspelled tool has no ref
    await run.act(tools['post-mesage'], { channel: 'launch', text: 'hello' }),
    // @ts-expect-error a field of the wrong type
    await run.act(tools['post-message'], { channel: 42, text: 'hello' }),
    // @ts-expect-error a required field missing
    await run.act(tools['post-message'], { channel: 'launch' }),
    // @ts-expect-error a field the tool does not take
    await run.act(tools['post-message'], { channel: 'launch', text: 'hello', amountCents: 100 }),
    // The value `defineTool` returned (where its module is workflow-safe) and its input: checks.
    await run.act(postMessage, { channel: 'launch', text: 'hello' }, { step: 'announce-again' }),
    // @ts-expect-error the defineTool value with a field of the wrong type
    await run.act(postMessage, { channel: 'launch', text: 42 }),
    // @ts-expect-error the defineTool value with a required field missing
    await run.act(postMessage, { text: 'hello' }),
  ];
}

export async function typedStarts(client: RetrysafeClient, announceWorkflow: typeof announce): Promise<unknown[]> {
  return [
    // The workflow function (or its type with its name) and its input: checks.
    await client.startRun(announceWorkflow, {
      tenant: 'acme',
      eventId: 'e-1',
      input: { tenant: 'acme', eventId: 'e-1', text: 'hi' },
    }),
    await client.startRun<typeof announce>('announce', {
      tenant: 'acme',
      eventId: 'e-2',
      input: { tenant: 'acme', eventId: 'e-2', text: 'hi' },
    }),
    await client.startRun(announceWorkflow, {
      tenant: 'acme',
      eventId: 'e-3',
      // @ts-expect-error the run's input lacks `text`
      input: { tenant: 'acme', eventId: 'e-3' },
    }),
    await client.startRun<typeof announce>('announce', {
      tenant: 'acme',
      eventId: 'e-4',
      // @ts-expect-error `text` of the wrong type
      input: { tenant: 'acme', eventId: 'e-4', text: 7 },
    }),
  ];
}

export function aRun(): ActionRun {
  return new ActionRun({ tenant: 'acme', eventId: 'e-1' });
}
