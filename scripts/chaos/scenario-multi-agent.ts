import {
  actionState,
  awaitWorkflowResult,
  countOpen,
  retrying,
  rootMessage,
  runActionKeys,
  leftUnresolved,
} from './observe';
import { countRenewalEffects, renewalInputFor } from './scenario-renewal';
import { RUN_CALL_MODES, TRANSIENT_FAULTS } from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, runWorkflowId } from 'retrysafe';
import type { AgentRunInput, AgentRunResult } from 'retrysafe/workflow';

/**
 * Two agents (agent runs with recorded planner decisions, the scripted renewal planner by default) work
 * the same renewal event at once. They derive the same action keys, so one owns each action and the other
 * waits on its outcome. The worker serving both dies at the charge. Expected: one reservation, one charge,
 * one shipment for the order, both runs done and reporting the same charge.
 */

const AGENTS = ['agent-a', 'agent-b'] as const;

function agentInputFor(ctx: IterationContext, agent: string): AgentRunInput {
  const order = renewalInputFor(ctx);
  return {
    tenant: ctx.tenant,
    eventId: ctx.eventId,
    agent,
    goal: 'Renew the subscription: reserve the plan, charge the customer, ship the welcome kit.',
    facts: {
      order: {
        id: order.orderId,
        amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10,
        currency: order.currency,
        customerId: order.customerId,
        paymentMethod: order.paymentMethod,
        sku: order.sku,
        quantity: order.quantity,
        address: order.shipTo,
      },
    },
  };
}

type Outcome = { ok: true; value: AgentRunResult } | { ok: false; error: Error } | undefined;

function start(ctx: IterationContext): StartedWork {
  const { orderId } = renewalInputFor(ctx);
  const runIds = AGENTS.map((agent) => runWorkflowId(ctx.tenant, ctx.eventId, agent));
  const outcomes: Outcome[] = AGENTS.map(() => undefined);
  const settled = (async () => {
    await Promise.all(
      AGENTS.map(async (agent, i) => {
        const run = await retrying(() => ctx.retrysafe.startAgentRun(agentInputFor(ctx, agent)));
        outcomes[i] = await awaitWorkflowResult(() => run.result() as Promise<AgentRunResult>, ctx.signal);
      }),
    );
  })();

  return {
    settled,
    async verify(): Promise<Tally> {
      const effects = await countRenewalEffects(ctx, orderId);
      const keysPerRun = await Promise.all(runIds.map((id) => runActionKeys(ctx.client, id)));
      const keys = [...new Set(keysPerRun.flat())];
      const states = await Promise.all(keys.map((k) => actionState(ctx.client, k, ctx.stack.ledger)));
      const unexplained: string[] = [];
      const statuses = outcomes.map((o) => (o?.ok ? o.value.status : o ? 'workflow-failed' : 'unsettled'));
      outcomes.forEach((o, i) => {
        if (statuses[i] !== 'done') {
          unexplained.push(
            `${AGENTS[i]} ended ${statuses[i]}${o && !o.ok ? `: ${rootMessage(o.error)}` : o?.ok ? ` (${o.value.reason})` : ''}`,
          );
        }
      });
      const [a, b] = outcomes.map((o) =>
        o?.ok ? o.value.actions.map((x) => `${x.key}=${x.providerRef ?? '-'}`).join(' ') : undefined,
      );
      if (a !== undefined && b !== undefined && a !== b)
        unexplained.push(`the agents disagree: ${AGENTS[0]} ${a}; ${AGENTS[1]} ${b}`);
      unexplained.push(...leftUnresolved(states));
      return {
        outcome: statuses.every((s) => s === 'done') ? 'done×2' : statuses.join('/'),
        expectedEffects: 3,
        actualEffects: effects.net,
        duplicates: effects.duplicates,
        lost: effects.missing,
        ...countOpen(states),
        unexplained,
        notes: [`runs ${runIds.join(', ')}`, `actions ${keys.join(', ') || 'none'}`, `ledger ${effects.summary}`],
      };
    },
  };
}

export const multiAgentScenario: ChaosScenario = {
  name: 'multi-agent',
  summary: 'two agents on one renewal event (one owner per action); crashes at the shared charge',
  operation: 'charge',
  providers: ['payments'],
  modes: RUN_CALL_MODES,
  faultPool: TRANSIENT_FAULTS,
  dropChance: 0.3,
  // What an agent does after a declined card is the planner's choice, not an expectation this scenario can
  // state for every planner; declines are exercised by the renewal and approval scenarios.
  declineChance: 0,
  readLagMs: [0, 2_000],
  retrysafe: { start },
};
