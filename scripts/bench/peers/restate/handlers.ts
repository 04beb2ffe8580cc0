import * as restate from '@restatedev/restate-sdk';

import { exampleTools, type ExampleOperation } from '../../../../examples/tools';
import type { PeerChargeInput, PeerCrashInput, PeerProviderUrls, PeerRenewalInput, PeerRenewalResult } from '../types';
import { actionKeyFor, chargeIntent, crashIntent, reserveIntent, shipmentIntent } from '../intents';
import type { AnyTool, Intent, ToolContext, ToolOutcome } from 'retrysafe';
import type { CrashHook } from 'retrysafe/testing';

/** What one step journals: the tool's committed outcome, its providerRef being the effect's reference. */
export type CommittedStep = Extract<ToolOutcome, { outcome: 'committed' }>;

export const WORKFLOW_NAMES = {
  charge: 'RetrysafeCharge',
  renewal: 'RetrysafeRenewal',
  crashStep: 'RetrysafeCrashStep',
} as const;

/**
 * The peer's three workflows. Each side effect is one `ctx.run` whose closure calls the example tool's own
 * `execute` with the action key, so the provider sees exactly the request retrysafe's executor would send.
 * The workflow keys are chosen by the caller (index.ts): the action key for a single step, the run ID for
 * the renewal, so a second submission for the same business event attaches to the first.
 */
export function peerWorkflows(providers: PeerProviderUrls, crash: CrashHook) {
  const tools = new Map<string, AnyTool>(exampleTools(providers).map((tool) => [tool.name, tool]));

  /** One keyed side effect, journaled by Restate once its closure returns. */
  function step(ctx: restate.WorkflowContext, input: { tenant: string; eventId: string }, intent: Intent) {
    const { operation, ...fields } = intent;
    const tool = tools.get(operation);
    if (!tool) throw new restate.TerminalError(`no example tool named ${operation}`);
    const key = actionKeyFor(input, operation as ExampleOperation);
    const signal = ctx.request().attemptCompletedSignal;
    // Restate does not hand a run closure its attempt number; this counts the attempts this process made.
    let attempt = 0;
    return ctx.run(operation, async (): Promise<CommittedStep> => {
      attempt += 1;
      const toolCtx: ToolContext = {
        key,
        attempt,
        heartbeat: () => undefined,
        signal,
        log: {
          info: (msg, meta) => (meta ? ctx.console.info(msg, meta) : ctx.console.info(msg)),
          warn: (msg, meta) => (meta ? ctx.console.warn(msg, meta) : ctx.console.warn(msg)),
        },
      };
      crash('before-send', operation);
      const outcome = await tool.execute(tool.input.parse(fields), toolCtx);
      if (outcome.outcome === 'committed') {
        // The provider has committed; dying here loses the reply before Restate journals it.
        crash('after-commit', operation);
        return outcome;
      }
      if (outcome.outcome === 'rejected') {
        throw new restate.TerminalError(`${operation} rejected (${outcome.reason}): ${outcome.message}`);
      }
      // not-committed or ambiguous: a plain error, so Restate retries the closure as it always does.
      throw new Error(
        `${operation} ${outcome.outcome}: ${outcome.outcome === 'ambiguous' ? outcome.message : outcome.reason}`,
      );
    });
  }

  const charge = restate.workflow({
    name: WORKFLOW_NAMES.charge,
    handlers: {
      run: async (ctx: restate.WorkflowContext, input: PeerChargeInput): Promise<{ chargeId: string }> => {
        const charged = await step(ctx, input, chargeIntent(input));
        return { chargeId: charged.providerRef };
      },
    },
  });

  const renewal = restate.workflow({
    name: WORKFLOW_NAMES.renewal,
    handlers: {
      run: async (ctx: restate.WorkflowContext, input: PeerRenewalInput): Promise<PeerRenewalResult> => {
        const reserved = await step(ctx, input, reserveIntent(input));
        const charged = await step(ctx, input, chargeIntent(input));
        const shipped = await step(ctx, input, shipmentIntent(input));
        return { reservationId: reserved.providerRef, chargeId: charged.providerRef, shipmentId: shipped.providerRef };
      },
    },
  });

  const crashStep = restate.workflow({
    name: WORKFLOW_NAMES.crashStep,
    handlers: {
      run: async (ctx: restate.WorkflowContext, input: PeerCrashInput): Promise<{ providerRef: string }> => {
        const done = await step(ctx, input, crashIntent(input));
        return { providerRef: done.providerRef };
      },
    },
  });

  return { charge, renewal, crashStep };
}

type PeerWorkflows = ReturnType<typeof peerWorkflows>;
export type ChargeWorkflow = PeerWorkflows['charge'];
export type RenewalWorkflow = PeerWorkflows['renewal'];
export type CrashStepWorkflow = PeerWorkflows['crashStep'];
