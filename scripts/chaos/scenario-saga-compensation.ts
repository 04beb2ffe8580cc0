import { countOpen, recordsWhere, leftUnresolved } from './observe';
import { startRenewalRun } from './scenario-renewal';
import { KEYED_CALL_MODES, TRANSIENT_FAULTS } from './scenario-defaults';
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';

/**
 * The renewal whose shipment fails for good, so the saga undoes what it did, newest first: refund the
 * charge, release the stock. Every crash is aimed at the refund, the compensation that moves money back.
 * Expected at the providers, by order reference: one reservation and one release, one charge and one
 * refund of the whole amount, no shipment, nothing left standing; the run ends `compensated`.
 */

function start(ctx: IterationContext): StartedWork {
  const run = startRenewalRun(ctx);
  return {
    settled: run.settled,
    async verify(): Promise<Tally> {
      const effects = await countCompensatedRenewal(ctx, run.input.orderId);
      const states = await run.actionStates();
      const status = run.status();
      const unexplained: string[] = [];
      if (status !== 'compensated') unexplained.push(`run ended ${run.describe()}`);
      if (effects.shipments > 0) unexplained.push(`${effects.shipments} shipment(s) although every shipment fails`);
      if (effects.standing > 0) unexplained.push(`${effects.standing} effect(s) still stand after compensation`);
      unexplained.push(...leftUnresolved(states));
      return {
        outcome: status,
        expectedEffects: effects.expected,
        actualEffects: effects.gross,
        duplicates: effects.duplicates,
        lost: effects.missing,
        ...countOpen(states),
        unexplained,
        notes: [
          `run ${run.runId}`,
          `actions ${states.map((s) => s?.key ?? '?').join(', ') || 'none'}`,
          `ledger ${effects.summary}`,
        ],
      };
    },
  };
}

/**
 * Each of the four steps (reserve, charge, refund, release) must have happened exactly once: more is a
 * duplicate (a second refund moves money twice), fewer is lost (a charge never refunded). `standing`
 * counts what compensation should have undone but did not.
 */
export async function countCompensatedRenewal(ctx: IterationContext, orderId: string) {
  const [inventory, payments, shipping] = await Promise.all([
    ctx.providers.inventory.ledger(),
    ctx.providers.payments.ledger(),
    ctx.providers.shipping.ledger(),
  ]);
  const reservations = recordsWhere(inventory, 'reservations', { orderId });
  const reservationIds = new Set(reservations.map((r) => r.id));
  const releases = (inventory.records.releases ?? []).filter((r) =>
    reservationIds.has(String((r as Record<string, unknown>).reservationId)),
  );
  const charges = recordsWhere(payments, 'charges', { merchantReference: orderId });
  const refunds = recordsWhere(payments, 'refunds', { merchantReference: orderId });
  const shipments = recordsWhere(shipping, 'shipments', { orderId });
  const steps = [reservations.length, charges.length, refunds.length, releases.length];
  const standing =
    reservations.filter((r) => r.status === 'reserved').length +
    charges.filter((c) => Number(c.amountRefundedCents ?? 0) < Number(c.amountCents)).length +
    shipments.length;
  return {
    expected: steps.length,
    gross: steps.reduce((n, c) => n + c, 0),
    duplicates: steps.reduce((n, c) => n + Math.max(0, c - 1), 0),
    missing: steps.reduce((n, c) => n + Math.max(0, 1 - c), 0),
    standing,
    shipments: shipments.length,
    summary:
      `reservations ${reservations.length}, releases ${releases.length}, charges ${charges.length}, ` +
      `refunds ${refunds.length}, shipments ${shipments.length}`,
  };
}

export const sagaCompensationScenario: ChaosScenario = {
  name: 'saga-compensation',
  summary: 'renewal whose shipment fails for good; crashes at the refund that compensates the charge',
  operation: 'refund',
  providers: ['payments', 'shipping'],
  modes: KEYED_CALL_MODES,
  faultPool: TRANSIENT_FAULTS,
  dropChance: 0.3,
  // A declined refund rightly waits for a person (nothing may try a second, different undo): a separate
  // expectation this scenario does not mix in; test/integration/saga-and-interlocks.test.ts covers it.
  declineChance: 0,
  readLagMs: [0, 2_000],
  /**
   * Time to the refund: reserve, charge and the failed shipment come first, so random kills reach further.
   */
  randomKillMs: [500, 6_000],
  async prepare(providers) {
    await providers.shipping.setFaults([{ op: 'shipments.create', kind: 'permanent-failure' }]);
  },
  retrysafe: { start },
};
