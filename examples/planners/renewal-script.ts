import { ApplicationFailure } from '@temporalio/activity';
import { z } from 'zod';
type Operation = string;
import { shipmentRefFor } from '../tools/references';
import { ScriptedPlanner, type PlannerFacts, type PlannerHistoryEntry, type ScriptStep } from 'retrysafe/worker';

/**
 * The renewal demo's planner, as code: it reads the order from the facts and what is already done from
 * the history, and proposes the next step. It goes through the same tool-call path as a model, so its
 * proposals are parsed and recorded like any other.
 *
 *   nothing done ─▶ reserve ─▶ charge ─▶ create-shipment ─▶ stop
 *   a step failed or was compensated ─▶ stop;  unknown, needs review or still in flight ─▶ ask-human
 */
export const RENEWAL_PLANNER_MODEL_ID = 'scripted:renewal-v1';

/** The facts the renewal script needs. Values are passed through unchecked so the intent parser judges them. */
export const RenewalFacts = z.object({
  order: z.object({
    id: z.string(),
    amountCents: z.number(),
    currency: z.string(),
    customerId: z.string(),
    paymentMethod: z.string(),
    sku: z.string(),
    quantity: z.number(),
    address: z.object({ line1: z.string(), city: z.string(), postalCode: z.string(), country: z.string() }),
  }),
});
export type RenewalFacts = z.infer<typeof RenewalFacts>;

type Order = RenewalFacts['order'];

/** The script, in order: each step's tool arguments, derived from the order alone. */
const PLAN = [
  { operation: 'reserve', args: (o: Order) => ({ sku: o.sku, quantity: o.quantity, orderId: o.id }) },
  {
    operation: 'charge',
    args: (o: Order) => ({
      amountCents: o.amountCents,
      currency: o.currency,
      customerId: o.customerId,
      paymentMethod: o.paymentMethod,
      merchantReference: o.id,
      description: `Renewal of order ${o.id}`,
    }),
  },
  {
    operation: 'create-shipment',
    args: (o: Order, tenant: string) => ({
      shipmentRef: shipmentRefFor(tenant, o.id),
      orderId: o.id,
      address: o.address,
    }),
  },
] as const satisfies ReadonlyArray<{
  operation: Operation;
  args: (o: Order, tenant: string) => Record<string, unknown>;
}>;
const PLANNED: readonly Operation[] = PLAN.map((p) => p.operation);

export function renewalScript(input: PlannerFacts): ScriptStep | undefined {
  const parsed = RenewalFacts.safeParse(input.facts);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ApplicationFailure.create({
      type: 'InvalidPlannerFacts',
      message: `the renewal script needs facts.${issue.path.join('.')}: ${issue.message}`,
      nonRetryable: true,
      details: [{ field: `facts.${issue.path.join('.')}` }],
    });
  }
  const { order } = parsed.data;
  // History the script did not write means the run went somewhere it does not cover: refuse to guess.
  if (input.history.some((h) => !PLANNED.includes(h.operation))) return undefined;

  for (const { operation, args } of PLAN) {
    const latest = lastOf(input.history, operation);
    if (!latest) return { kind: 'tool', name: operation, arguments: args(order, input.tenant) };
    if (latest.status === 'confirmed') continue;
    if (latest.status === 'failed' || latest.status === 'compensating' || latest.status === 'compensated') {
      return {
        kind: 'stop',
        reason: `${operation} for order ${order.id} is ${latest.status}; the renewal cannot continue`,
      };
    }
    return {
      kind: 'ask-human',
      question: `${operation} for order ${order.id} is ${latest.status} (${latest.key}); how should the renewal continue?`,
    };
  }
  return { kind: 'stop', reason: `order ${order.id} is reserved, charged and shipped` };
}

function lastOf(history: readonly PlannerHistoryEntry[], operation: Operation): PlannerHistoryEntry | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i].operation === operation) return history[i];
  return undefined;
}

/** The default planner: the renewal script. Throws when asked about history its script does not cover. */
export function renewalPlanner(): ScriptedPlanner {
  return new ScriptedPlanner(renewalScript, { modelId: RENEWAL_PLANNER_MODEL_ID });
}

/**
 * A "newer model" that would now answer differently: it proposes a higher charge for the same order.
 * Used to show that a resumed or replayed run keeps the decisions it recorded instead of asking again.
 */
export const UPSELL_PLANNER_MODEL_ID = 'scripted:renewal-v2-upsell';
export const UPSELL_DELTA_CENTS = 1_000;

export function upsellRenewalPlanner(): ScriptedPlanner {
  return new ScriptedPlanner(
    (input, call) => {
      const step = renewalScript(input);
      if (step?.kind === 'tool' && step.name === 'charge') {
        const args = step.arguments as { amountCents: number };
        return { ...step, arguments: { ...args, amountCents: args.amountCents + UPSELL_DELTA_CENTS } };
      }
      void call;
      return step;
    },
    { modelId: UPSELL_PLANNER_MODEL_ID },
  );
}
