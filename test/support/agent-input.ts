import type { AgentRunInput } from '../../workflows/agent-run';

/** An agent run's input for the renewal goal, for event `eventId` (and `agent`, one of several on one event). */
export function agentInput(
  eventId: string,
  agent?: string,
  overrides: Partial<AgentRunInput> = {},
  amountCents = 4990,
): AgentRunInput {
  return {
    tenant: 'acme',
    eventId,
    ...(agent ? { agent } : {}),
    goal: 'Renew the subscription: reserve the plan, charge the customer, ship the welcome kit.',
    facts: {
      order: {
        id: `A-${eventId}`.slice(0, 80),
        amountCents,
        currency: 'usd',
        customerId: 'cus_acme',
        paymentMethod: 'pm_7',
        sku: 'plan-annual',
        quantity: 1,
        address: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
      },
    },
    ...overrides,
  };
}
