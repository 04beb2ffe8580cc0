import type { BareToolInput, BareToolResult } from '../../examples/activities/bare-tool';
import { ordersDatabaseTools } from '../../examples/orders-database/tools';
import { smtpMailTools } from '../../examples/smtp-mail/tools';
import { stripeTools, type StripeContract } from '../../examples/stripe-payments/tools';
import { bareToolWorkflow } from '../../examples/workflows/baseline';
import {
  startMailServer,
  startOrdersDatabase,
  startPaymentsServer,
  type ExampleServer,
  type PaymentsServer,
} from '../lib/example-servers';
import {
  actionState,
  awaitWorkflowResult,
  retrying,
  rootMessage,
  waitForActionStatus,
  type ActionState,
} from './observe';
import { RESTING_STATUSES, claimThroughCrashes } from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';
import {
  type AnyTool,
  DEFAULT_AUTO_APPROVE_BELOW_CENTS,
  RetrysafeClient,
  actionKeyForStep,
  runWorkflowId,
} from 'retrysafe';

/**
 * Scenarios on the example tools' real servers: one action per iteration through the tool's own worker entry,
 * claimed by application code, with the worker SIGKILLed before the send, after the server committed (the reply
 * lost with the worker), or at a random time. Effects are counted in the server's own data by the iteration's event
 * ID. No faults: a real server cannot be told to fail the next request, so the crash is the whole plan. The baseline
 * runs the same tool code in a bare activity with a fresh key per attempt (examples/activities/bare-tool.ts).
 */
export interface RealServerScenarioSpec<S extends ExampleServer> {
  name: string;
  summary: string;
  /** The tool, built with placeholder settings: the plan reads its contract, the client parses and hashes with it. */
  tool: AnyTool;
  workerEntry: string;
  workerEnv?: Record<string, string>;
  start(log: (line: string) => void): Promise<S>;
  /** The iteration's input (without `operation`), made unique by the event ID; `server` has made what it needs. */
  input(eventId: string, server: S): Record<string, unknown>;
  /** The iteration's effects at the server, from its own data. */
  count(server: S, eventId: string): Promise<number>;
}

/** The points a real-server worker reaches itself, weighted towards the one after the commit; random-time anywhere. */
const REAL_SERVER_MODES: ChaosScenario['modes'] = [
  ['before-send', 1],
  ['after-commit', 3],
  ['random-time', 2],
];

export function realServerScenario<S extends ExampleServer>(spec: RealServerScenarioSpec<S>): ChaosScenario {
  const serverOf = (ctx: IterationContext) => {
    if (!ctx.server) throw new Error(`${spec.name}: the run started no server for this scenario`);
    return ctx.server as S;
  };
  const intentOf = (ctx: IterationContext) => ({
    operation: spec.tool.name,
    ...spec.input(ctx.eventId, serverOf(ctx)),
  });

  function startRetrysafe(ctx: IterationContext): StartedWork {
    const client = new RetrysafeClient(ctx.client, { taskQueue: ctx.taskQueue, tools: [spec.tool] });
    const key = actionKeyForStep(runWorkflowId(ctx.tenant, ctx.eventId), {
      operation: spec.tool.name,
      version: spec.tool.version,
    });
    let claimError: Error | undefined;
    let final: ActionState | undefined;
    const settled = (async () => {
      try {
        await claimThroughCrashes(ctx, intentOf(ctx), client);
      } catch (err) {
        claimError = err as Error;
        return;
      }
      final = await waitForActionStatus(ctx.client, key, RESTING_STATUSES, ctx.signal);
    })();
    return {
      settled,
      async verify(): Promise<Tally> {
        const effects = await spec.count(serverOf(ctx), ctx.eventId);
        const state = final ?? (await actionState(ctx.client, key));
        const unexplained: string[] = [];
        if (claimError) unexplained.push(`claim failed: ${rootMessage(claimError)}`);
        else if (state?.status !== 'confirmed') unexplained.push(`${key} ended ${state?.status ?? 'absent'}`);
        return {
          outcome: claimError ? 'claim-failed' : (state?.status ?? 'absent'),
          expectedEffects: 1,
          actualEffects: effects,
          duplicates: Math.max(0, effects - 1),
          lost: Math.max(0, 1 - effects),
          unknown: state?.status === 'unknown' ? 1 : 0,
          needsReview: state?.status === 'needs_review' ? 1 : 0,
          unexplained,
          notes: [`action ${key}`, `${effects} effect(s) at ${serverOf(ctx).describe}`],
        };
      },
    };
  }

  function startBaseline(ctx: IterationContext): StartedWork {
    const workflowId = `baseline:${ctx.tenant}:${ctx.eventId}`;
    let outcome: { ok: true; value: BareToolResult } | { ok: false; error: Error } | undefined;
    const settled = (async () => {
      const input: BareToolInput = intentOf(ctx);
      const handle = await retrying(() =>
        ctx.client.workflow.start(bareToolWorkflow, { workflowId, taskQueue: ctx.taskQueue, args: [input] }),
      );
      outcome = await awaitWorkflowResult(() => handle.result(), ctx.signal);
    })();
    return {
      settled,
      async verify(): Promise<Tally> {
        const effects = await spec.count(serverOf(ctx), ctx.eventId);
        const status = outcome?.ok ? 'done' : outcome ? 'workflow-failed' : 'unsettled';
        return {
          outcome: status,
          expectedEffects: 1,
          actualEffects: effects,
          duplicates: Math.max(0, effects - 1),
          lost: Math.max(0, 1 - effects),
          unknown: 0,
          needsReview: 0,
          unexplained:
            status === 'done'
              ? []
              : [`bare ${spec.tool.name} ended ${status}: ${outcome && !outcome.ok ? rootMessage(outcome.error) : ''}`],
          notes: [`workflow ${workflowId}`, `attempts ${outcome?.ok ? outcome.value.attempt : '?'}`],
        };
      },
    };
  }

  return {
    name: spec.name,
    summary: spec.summary,
    operation: spec.tool.name,
    providers: [],
    modes: REAL_SERVER_MODES,
    faultPool: [['none', 1]],
    dropChance: 0,
    declineChance: 0,
    readLagMs: [0, 0],
    retrysafe: { start: startRetrysafe },
    baseline: { start: startBaseline },
    realServer: {
      tool: spec.tool,
      workerEntry: spec.workerEntry,
      ...(spec.workerEnv ? { workerEnv: spec.workerEnv } : {}),
      start: spec.start,
    },
  };
}

const PLACEHOLDER_MAIL = { smtp: { host: '127.0.0.1', port: 9 }, apiUrl: 'http://127.0.0.1:9', from: 'a@example.com' };

export const ordersDatabaseScenario = realServerScenario({
  name: 'orders-database',
  summary: 'record-order on a real PostgreSQL through pg (transactional); counted as order rows',
  tool: ordersDatabaseTools('postgres://127.0.0.1:9/unused')[0],
  workerEntry: 'examples/orders-database/worker.ts',
  start: (log) => startOrdersDatabase(log),
  input: (eventId) => ({ customer: eventId, sku: 'SKU-CHAOS', quantity: 1 }),
  count: (db, eventId) => db.orders(eventId),
});

export const smtpMailScenario = realServerScenario({
  name: 'smtp-mail',
  summary:
    'send-notification over SMTP to a real Mailpit through nodemailer (lookup by Message-ID); counted as messages',
  tool: smtpMailTools(PLACEHOLDER_MAIL)[0],
  workerEntry: 'examples/smtp-mail/worker.ts',
  start: (log) => startMailServer({ log }),
  input: (eventId) => ({
    to: 'ops@example.com',
    subject: `chaos ${eventId}`,
    text: 'Exactly one of these is expected.',
  }),
  count: (mail, eventId) => mail.messages(`chaos ${eventId}`),
});

const PLACEHOLDER_STRIPE = { apiKey: 'sk_test_placeholder', apiBase: 'http://127.0.0.1:9' };

function stripeScenario(name: string, contract: StripeContract, summary: string): ChaosScenario {
  return realServerScenario<PaymentsServer>({
    name,
    summary,
    tool: stripeTools({ ...PLACEHOLDER_STRIPE, contract })[0],
    workerEntry: 'examples/stripe-payments/worker.ts',
    start: (log) => startPaymentsServer({ contract, log }),
    input: (eventId, server) => ({
      customerId: server.customer,
      // Below the decision table's automatic threshold: this scenario measures crashes, not approvals.
      amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10,
      currency: 'usd',
      description: `chaos ${eventId}`,
    }),
    count: (payments, eventId) => payments.charges(`chaos ${eventId}`),
  });
}

export const stripeChargeScenario = stripeScenario(
  'stripe-charge',
  'lookup',
  'stripe-charge on localstripe through the stripe SDK, looked up by metadata; counted as succeeded charges',
);

/**
 * Stripe's documented contract on a server that ignores it: localstripe forgets no key because it never keeps one.
 * The harness must report the duplicates an after-commit crash makes here, or it would not catch a wrong contract.
 */
export const stripeKeyOnlyScenario = stripeScenario(
  'stripe-key-only',
  'idempotency-key',
  'stripe-charge on localstripe under the key-only contract localstripe ignores: expected to duplicate',
);
