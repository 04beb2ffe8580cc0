import type { BareChargeInput, BareChargeResult } from '../../examples/activities/bare-charge';
import { baselineChargeWorkflow } from '../../examples/workflows/baseline';
import type { RenewalInput, RenewalResult } from '../../examples/workflows/renewal';
import {
  type ActionState,
  actionState,
  awaitWorkflowResult,
  countOpen,
  recordsWhere,
  retrying,
  rootMessage,
  runActionKeys,
  leftUnresolved,
} from './observe';
import { RUN_CALL_MODES, TRANSIENT_FAULTS } from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS, runWorkflowId } from 'retrysafe';

/**
 * The renewal from the first source article (reserve → charge → ship, a saga) started through
 * `startRenewal`, with every crash aimed at the charge. Counted at the providers by business reference
 * (the order ID): one reservation, one charge, one shipment when renewed; nothing left standing when the
 * card was declined and the saga compensated.
 */

/** Below the decision table's automatic threshold: this scenario measures crashes, not approvals. */
const AMOUNT_CENTS = DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10;

export function renewalInputFor(ctx: Pick<IterationContext, 'tenant' | 'eventId'>): RenewalInput {
  return {
    tenant: ctx.tenant,
    eventId: ctx.eventId,
    orderId: `O-${ctx.eventId}`,
    customerId: 'cus_chaos',
    paymentMethod: 'pm_chaos',
    amountCents: AMOUNT_CENTS,
    currency: 'usd',
    sku: 'plan-annual',
    quantity: 1,
    shipTo: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
  };
}

export interface RenewalRun {
  input: RenewalInput;
  runId: string;
  settled: Promise<void>;
  /** The run's result once it closed; undefined while it runs. */
  outcome(): { ok: true; value: RenewalResult } | { ok: false; error: Error } | undefined;
  /** `renewed`, `compensated`, … from the result; `workflow-failed` or `unsettled` otherwise. */
  status(): string;
  /** The status with the failure's innermost message, for an unexplained entry. */
  describe(): string;
  /** The run's actions as each last published its status. */
  actionStates(): Promise<Array<ActionState | undefined>>;
}

/** Starts the iteration's renewal through the client and follows it through crashes and restarts. */
export function startRenewalRun(ctx: IterationContext): RenewalRun {
  const input = renewalInputFor(ctx);
  const runId = runWorkflowId(ctx.tenant, ctx.eventId);
  let outcome: ReturnType<RenewalRun['outcome']>;
  const settled = (async () => {
    const run = await retrying(() => ctx.retrysafe.startRenewal(input));
    outcome = await awaitWorkflowResult(() => run.result() as Promise<RenewalResult>, ctx.signal);
  })();
  const status = () => (outcome?.ok ? outcome.value.status : outcome ? 'workflow-failed' : 'unsettled');
  return {
    input,
    runId,
    settled,
    outcome: () => outcome,
    status,
    describe: () => `${status()}${outcome && !outcome.ok ? `: ${rootMessage(outcome.error)}` : ''}`,
    async actionStates() {
      const keys = await runActionKeys(ctx.client, runId);
      return Promise.all(keys.map((k) => actionState(ctx.client, k, ctx.stack.ledger)));
    },
  };
}

function startRetrysafe(ctx: IterationContext): StartedWork {
  const run = startRenewalRun(ctx);
  const { input, runId } = run;

  return {
    settled: run.settled,
    async verify(): Promise<Tally> {
      const effects = await countRenewalEffects(ctx, input.orderId);
      const states = await run.actionStates();
      const keys = states.flatMap((s) => (s ? [s.key] : []));
      const open = countOpen(states);
      const outcome = run.outcome();
      const result = outcome?.ok ? outcome.value : undefined;
      const status = run.status();
      const unexplained: string[] = [];

      // Renewed: one of each. Declined card: the saga undid what it did, so nothing stands.
      const declinedAsPlanned = ctx.plan.declined && (status === 'failed' || status === 'compensated');
      const expected = declinedAsPlanned ? 0 : 3;
      if (!declinedAsPlanned && status !== 'renewed') {
        unexplained.push(`run ended ${run.describe()}`);
      }
      if (declinedAsPlanned && effects.net > 0) unexplained.push(`declined, yet ${effects.net} effect(s) still stand`);
      if (status === 'renewed' && result?.chargeId && !effects.chargeIds.includes(result.chargeId)) {
        unexplained.push(
          `run reports charge ${result.chargeId}, the provider holds ${effects.chargeIds.join(', ') || 'none'}`,
        );
      }
      unexplained.push(...leftUnresolved(states));
      return {
        outcome: status,
        expectedEffects: expected,
        actualEffects: effects.net,
        duplicates: effects.duplicates,
        lost: expected === 0 ? 0 : effects.missing,
        ...open,
        unexplained,
        notes: [`run ${runId}`, `actions ${keys.join(', ') || 'none'}`, `ledger ${effects.summary}`],
      };
    },
  };
}

/**
 * Per step, the records carrying this order's reference. Gross counts above one are duplicates (a second
 * charge is a second effect even if refunded later); net counts what still stands after compensation.
 */
export async function countRenewalEffects(ctx: IterationContext, orderId: string) {
  const [inventory, payments, shipping] = await Promise.all([
    ctx.providers.inventory.ledger(),
    ctx.providers.payments.ledger(),
    ctx.providers.shipping.ledger(),
  ]);
  const reservations = recordsWhere(inventory, 'reservations', { orderId });
  const charges = recordsWhere(payments, 'charges', { merchantReference: orderId });
  const shipments = recordsWhere(shipping, 'shipments', { orderId });
  const steps = [
    { gross: reservations.length, net: reservations.filter((r) => r.status === 'reserved').length },
    {
      gross: charges.length,
      net: charges.filter((c) => Number(c.amountRefundedCents ?? 0) < Number(c.amountCents)).length,
    },
    { gross: shipments.length, net: shipments.length },
  ];
  return {
    net: steps.reduce((n, s) => n + s.net, 0),
    duplicates: steps.reduce((n, s) => n + Math.max(0, s.gross - 1), 0),
    missing: steps.reduce((n, s) => n + Math.max(0, 1 - s.net), 0),
    chargeIds: charges.map((c) => c.id),
    summary: `reservations ${reservations.length}, charges ${charges.length}, shipments ${shipments.length}`,
  };
}

/** The bare Temporal charge for the same order under the same plan (see activities/baseline.ts). */
function startBaseline(ctx: IterationContext): StartedWork {
  const { amountCents, currency, customerId, paymentMethod, orderId } = renewalInputFor(ctx);
  const input: BareChargeInput = { amountCents, currency, customerId, paymentMethod, merchantReference: orderId };
  const workflowId = `baseline:${ctx.tenant}:${ctx.eventId}`;
  let outcome: { ok: true; value: BareChargeResult } | { ok: false; error: Error } | undefined;
  const settled = (async () => {
    const handle = await retrying(() =>
      ctx.client.workflow.start(baselineChargeWorkflow, { workflowId, taskQueue: ctx.taskQueue, args: [input] }),
    );
    outcome = await awaitWorkflowResult(() => handle.result(), ctx.signal);
  })();

  return {
    settled,
    async verify(): Promise<Tally> {
      const charges = recordsWhere(await ctx.providers.payments.ledger(), 'charges', { merchantReference: orderId });
      const declined = outcome?.ok === false && /BusinessRejected|declined/.test(rootMessage(outcome.error));
      const status = outcome?.ok ? 'charged' : declined ? 'declined' : outcome ? 'workflow-failed' : 'unsettled';
      const expected = ctx.plan.declined && declined ? 0 : 1;
      const unexplained: string[] = [];
      if (status !== 'charged' && !(ctx.plan.declined && declined)) {
        unexplained.push(
          `bare charge ended ${status}${outcome && !outcome.ok ? `: ${rootMessage(outcome.error)}` : ''}`,
        );
      }
      return {
        outcome: status,
        expectedEffects: expected,
        actualEffects: charges.length,
        duplicates: Math.max(0, charges.length - expected),
        lost: Math.max(0, expected - charges.length),
        unknown: 0,
        needsReview: 0,
        unexplained,
        notes: [`workflow ${workflowId}`, `charges ${charges.map((c) => c.id).join(', ') || 'none'}`],
      };
    },
  };
}

export const renewalScenario: ChaosScenario = {
  name: 'renewal',
  summary: 'renewal run (reserve → charge → ship); crashes at the charge; counted by order reference',
  operation: 'charge',
  providers: ['payments'],
  modes: RUN_CALL_MODES,
  faultPool: TRANSIENT_FAULTS,
  dropChance: 0.3,
  declineChance: 0.15,
  readLagMs: [0, 2_000],
  retrysafe: { start: startRetrysafe },
  baseline: { start: startBaseline },
};
