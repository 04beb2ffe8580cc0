import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RUN_CEILINGS,
  assertWithinCeilings,
  checkCeilings,
  limitOf,
  parseRunCeilings,
  raiseCeiling,
  resolveRunCeilings,
  DEFAULT_MAX_ACTION_CENTS,
  type CeilingName,
  type CeilingVerdict,
  type NextStep,
  type RunCeilings,
  type RunUsage,
} from '../../policies/ceilings';
import { RetrysafeError } from '../../policies/errors';
import type { ToolDescriptor } from '../../policies/tool';
import { amountOf } from '../../policies/tool-facts';
import type { Intent } from '../../policies/tool-registry';
import { exampleRegistry } from '../../examples/tools';

const tools = exampleRegistry();

const START = Date.parse('2026-08-28T10:00:00.000Z');
const CEILINGS: RunCeilings = {
  maxSteps: 10,
  deadlineMs: 60_000,
  maxSpendCents: 20_000,
  maxTokens: 1_000,
  maxSideEffects: 3,
  perAction: { maxAmountCents: 15_000, byTool: { refund: 5_000 } },
};
const usage = (over: Partial<RunUsage> = {}): RunUsage => ({
  steps: 0,
  spendCents: 0,
  tokens: 0,
  sideEffects: 0,
  startedAtMs: START,
  ...over,
});
const charge = (amountCents: number) =>
  tools.parseIntent({
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'c1',
    paymentMethod: 'pm1',
    merchantReference: 'A-1',
  });
const refund = (amountCents: number) =>
  tools.parseIntent({ operation: 'refund', chargeId: 'ch_1', amountCents, merchantReference: 'A-1' });
const ticket = tools.parseIntent({ operation: 'create-ticket', externalRef: 'T-1', title: 't', body: 'b' });

/** The next step of acting on an intent, as the workflow builds it from the tool's descriptor. */
const effect = (intent: Intent): NextStep => {
  const tool = tools.describe(intent);
  return { kind: 'effect', tool, amountCents: amountOf(tool, intent) };
};
/** A money-moving tool of the application's own, which the engine knows only by its descriptor. */
const PAYOUT: ToolDescriptor = {
  name: 'payout',
  version: 1,
  kind: 'mutation',
  dedupe: 'transactional',
  readAfterWriteLagMs: 0,
  riskClass: 'money-movement',
  hasLookup: false,
  amountField: 'totalMinor',
  limits: {},
};

function trips(verdict: CeilingVerdict, ceiling: CeilingName, limit: number, value: number): void {
  assert.equal(verdict.ok, false, `expected the ${ceiling} ceiling to trip`);
  if (verdict.ok) return;
  assert.equal(verdict.ceiling, ceiling, verdict.message);
  assert.equal(verdict.limit, limit);
  assert.equal(verdict.value, value);
}

describe('checkCeilings', () => {
  it('lets a fresh run proceed', () => {
    assert.deepEqual(checkCeilings(usage(), CEILINGS, START), { ok: true });
    assert.deepEqual(checkCeilings(usage(), CEILINGS, START, effect(charge(4_990))), { ok: true });
  });

  it('steps: the last allowed step passes, the one past the limit trips', () => {
    assert.equal(checkCeilings(usage({ steps: 9 }), CEILINGS, START, { kind: 'tool' }).ok, true);
    trips(checkCeilings(usage({ steps: 10 }), CEILINGS, START, { kind: 'tool' }), 'steps', 10, 11);
    assert.equal(
      checkCeilings(usage({ steps: 10 }), CEILINGS, START).ok,
      true,
      'at the limit, with no next step, the run is inside',
    );
  });

  it('deadline: trips at the deadline, not a millisecond before', () => {
    assert.equal(checkCeilings(usage(), CEILINGS, START + 59_999).ok, true);
    trips(checkCeilings(usage(), CEILINGS, START + 60_000), 'deadline', 60_000, 60_000);
    trips(checkCeilings(usage(), CEILINGS, START + 60_000, { kind: 'model', tokens: 1 }), 'deadline', 60_000, 60_000);
  });

  it('tokens: a call reaching the limit passes, one past it trips, and a spent budget refuses any model call', () => {
    assert.equal(checkCeilings(usage({ tokens: 900 }), CEILINGS, START, { kind: 'model', tokens: 100 }).ok, true);
    trips(
      checkCeilings(usage({ tokens: 900 }), CEILINGS, START, { kind: 'model', tokens: 101 }),
      'tokens',
      1_000,
      1_001,
    );
    trips(checkCeilings(usage({ tokens: 1_000 }), CEILINGS, START, { kind: 'model' }), 'tokens', 1_000, 1_000);
    assert.equal(
      checkCeilings(usage({ tokens: 1_000 }), CEILINGS, START, { kind: 'tool' }).ok,
      true,
      'tools use no tokens',
    );
  });

  it('side effects: the last allowed effect passes, the next trips', () => {
    assert.equal(checkCeilings(usage({ sideEffects: 2 }), CEILINGS, START, effect(ticket)).ok, true);
    trips(checkCeilings(usage({ sideEffects: 3 }), CEILINGS, START, effect(ticket)), 'side-effects', 3, 4);
    assert.equal(
      checkCeilings(usage({ sideEffects: 3 }), CEILINGS, START, { kind: 'tool' }).ok,
      true,
      'reads are not side effects',
    );
  });

  it('spend: moving money up to the limit passes, a cent more trips', () => {
    assert.equal(checkCeilings(usage({ spendCents: 10_000 }), CEILINGS, START, effect(charge(10_000))).ok, true);
    trips(
      checkCeilings(usage({ spendCents: 10_000 }), CEILINGS, START, effect(charge(10_001))),
      'spend',
      20_000,
      20_001,
    );
    trips(
      checkCeilings(usage({ spendCents: 18_000 }), CEILINGS, START, effect(refund(2_001))),
      'spend',
      20_000,
      20_001,
    );
  });

  it('per-action refund limit: at the limit passes, above trips and names what to raise', () => {
    assert.equal(checkCeilings(usage(), CEILINGS, START, effect(refund(5_000))).ok, true);
    const verdict = checkCeilings(usage(), CEILINGS, START, effect(refund(5_001)));
    trips(verdict, 'per-action', 5_000, 5_001);
    assert.equal(!verdict.ok && verdict.raise, 'per-action.refund');
  });

  it('per-action default limit: a money-moving tool without its own limit gets maxAmountCents', () => {
    assert.equal(checkCeilings(usage(), CEILINGS, START, effect(charge(15_000))).ok, true);
    const verdict = checkCeilings(usage(), CEILINGS, START, effect(charge(15_001)));
    trips(verdict, 'per-action', 15_000, 15_001);
    assert.equal(!verdict.ok && verdict.raise, 'per-action.charge');
  });

  it('per-action limits apply to a user-defined money-moving tool, read from its amount field', () => {
    const payout = (totalMinor: number): NextStep => ({
      kind: 'effect',
      tool: PAYOUT,
      amountCents: amountOf(PAYOUT, { operation: 'payout', totalMinor }),
    });
    assert.equal(checkCeilings(usage(), CEILINGS, START, payout(15_000)).ok, true);
    const verdict = checkCeilings(usage(), CEILINGS, START, payout(15_001));
    trips(verdict, 'per-action', 15_000, 15_001);
    assert.equal(!verdict.ok && verdict.raise, 'per-action.payout');
    assert.match(!verdict.ok ? verdict.message : '', /payout of 15001 cents/);
    const own = { ...CEILINGS, perAction: { ...CEILINGS.perAction, byTool: { payout: 20_000 } } };
    assert.equal(checkCeilings(usage(), own, START, payout(15_001)).ok, true);
    trips(checkCeilings(usage({ spendCents: 10_000 }), own, START, payout(15_001)), 'spend', 20_000, 25_001);
  });

  it('counts no money and no per-action limit for a tool that does not move money', () => {
    const reserve = tools.parseIntent({ operation: 'reserve', sku: 'SKU-1', quantity: 50, orderId: 'A-1' });
    const step: NextStep = { ...effect(reserve), amountCents: 999_999 };
    assert.deepEqual(checkCeilings(usage({ spendCents: 20_000 }), CEILINGS, START, step), { ok: true });
  });

  it('assertWithinCeilings throws CeilingReached with the numbers', () => {
    assert.throws(
      () => assertWithinCeilings(usage({ steps: 10 }), CEILINGS, START, { kind: 'model' }),
      (err: unknown) =>
        err instanceof RetrysafeError &&
        err.code === 'CeilingReached' &&
        err.details.ceiling === 'steps' &&
        err.details.limit === 10 &&
        /raise the steps ceiling/.test(err.message),
    );
  });
});

describe('raiseCeiling', () => {
  it('raises one ceiling and leaves the input untouched', () => {
    const raised = raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 20 }, 'alice');
    assert.equal(raised.maxSteps, 20);
    assert.equal(CEILINGS.maxSteps, 10);
    assert.equal(checkCeilings(usage({ steps: 10 }), raised, START, { kind: 'tool' }).ok, true);
  });

  it('raises a per-action limit so the stopped refund can proceed', () => {
    const raised = raiseCeiling(CEILINGS, { ceiling: 'per-action.refund', newLimit: 8_000 }, 'alice');
    assert.equal(raised.perAction.byTool.refund, 8_000);
    assert.equal(raised.perAction.maxAmountCents, 15_000);
    assert.equal(CEILINGS.perAction.byTool.refund, 5_000);
    assert.equal(checkCeilings(usage(), raised, START, effect(refund(5_001))).ok, true);
  });

  it("raises the limit a trip names: one tool's, starting from the default it was held to", () => {
    const verdict = checkCeilings(usage(), CEILINGS, START, effect(charge(15_001)));
    assert.ok(!verdict.ok);
    assert.equal(limitOf(CEILINGS, verdict.raise), 15_000);
    const raised = raiseCeiling(CEILINGS, { ceiling: verdict.raise, newLimit: 16_000 }, 'alice');
    assert.deepEqual(raised.perAction, { maxAmountCents: 15_000, byTool: { refund: 5_000, charge: 16_000 } });
    assert.equal(checkCeilings(usage(), raised, START, effect(charge(15_001))).ok, true);
    assert.equal(CEILINGS.perAction.byTool.charge, undefined, 'the input is left untouched');
    assert.throws(
      () => raiseCeiling(CEILINGS, { ceiling: 'per-action.charge', newLimit: 14_000 }, 'alice'),
      (err: unknown) =>
        err instanceof RetrysafeError && err.details.field === 'newLimit' && err.details.current === 15_000,
    );
  });

  it('raises the default per-action limit for every tool without its own', () => {
    const raised = raiseCeiling(CEILINGS, { ceiling: 'per-action', newLimit: 50_000 }, 'alice');
    assert.deepEqual(raised.perAction, { maxAmountCents: 50_000, byTool: { refund: 5_000 } });
    assert.equal(checkCeilings(usage(), raised, START, effect(charge(15_001))).ok, true);
    assert.equal(checkCeilings(usage(), raised, START, effect(refund(5_001))).ok, false);
  });

  it('raises every named ceiling', () => {
    let c = CEILINGS;
    c = raiseCeiling(c, { ceiling: 'deadline', newLimit: 120_000 }, 'op');
    c = raiseCeiling(c, { ceiling: 'spend', newLimit: 40_000 }, 'op');
    c = raiseCeiling(c, { ceiling: 'tokens', newLimit: 2_000 }, 'op');
    c = raiseCeiling(c, { ceiling: 'side-effects', newLimit: 6 }, 'op');
    c = raiseCeiling(c, { ceiling: 'per-action.charge', newLimit: 30_000 }, 'op');
    assert.deepEqual(c, {
      ...CEILINGS,
      deadlineMs: 120_000,
      maxSpendCents: 40_000,
      maxTokens: 2_000,
      maxSideEffects: 6,
      perAction: { maxAmountCents: 15_000, byTool: { refund: 5_000, charge: 30_000 } },
    });
  });

  it('treats raising to the current value as a no-op', () => {
    assert.deepEqual(raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 10 }, 'alice'), CEILINGS);
  });

  it('refuses non-positive, fractional and lowered limits, an unknown ceiling and a missing operator', () => {
    const field = (f: string) => (err: unknown) =>
      err instanceof RetrysafeError && err.code === 'InvalidIntent' && err.details.field === f;
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 0 }, 'alice'), field('newLimit'));
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: -3 }, 'alice'), field('newLimit'));
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 12.5 }, 'alice'), field('newLimit'));
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 5 }, 'alice'), field('newLimit'));
    assert.throws(
      () => raiseCeiling(CEILINGS, { ceiling: 'lunch' as 'steps', newLimit: 5 }, 'alice'),
      field('ceiling'),
    );
    assert.throws(
      () => raiseCeiling(CEILINGS, { ceiling: 'per-action.', newLimit: 20_000 }, 'alice'),
      field('ceiling'),
    );
    assert.throws(
      () => raiseCeiling(CEILINGS, { ceiling: 'per-action.Bad_Name', newLimit: 20_000 }, 'alice'),
      field('ceiling'),
    );
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 20 }, ' '), field('operator'));
  });
});

describe('defaults and overrides', () => {
  it('defaults are valid ceilings', () => {
    assert.deepEqual(parseRunCeilings(DEFAULT_RUN_CEILINGS), DEFAULT_RUN_CEILINGS);
  });

  it('gives every money-moving tool the default per-action limit and no per-tool overrides', () => {
    assert.deepEqual(DEFAULT_RUN_CEILINGS.perAction, { maxAmountCents: DEFAULT_MAX_ACTION_CENTS, byTool: {} });
  });

  it('resolves partial overrides over the defaults', () => {
    const c = resolveRunCeilings({ maxSteps: 5, perAction: { byTool: { charge: 1_000 } } });
    assert.equal(c.maxSteps, 5);
    assert.equal(c.perAction.byTool.charge, 1_000);
    assert.equal(c.perAction.maxAmountCents, DEFAULT_RUN_CEILINGS.perAction.maxAmountCents);
    assert.equal(c.perAction.byTool.refund, undefined);
    assert.deepEqual(resolveRunCeilings(undefined), DEFAULT_RUN_CEILINGS);
  });

  it('merges per-tool overrides one by one over the base, and keeps them when only the default changes', () => {
    const c = resolveRunCeilings({ perAction: { byTool: { charge: 1_000 } } }, CEILINGS);
    assert.deepEqual(c.perAction, { maxAmountCents: 15_000, byTool: { refund: 5_000, charge: 1_000 } });
    const d = resolveRunCeilings({ perAction: { maxAmountCents: 2_000 } }, CEILINGS);
    assert.deepEqual(d.perAction, { maxAmountCents: 2_000, byTool: { refund: 5_000 } });
    assert.deepEqual(CEILINGS.perAction, { maxAmountCents: 15_000, byTool: { refund: 5_000 } });
  });

  it('names the bad field of ceilings from input', () => {
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, maxTokens: -1 }),
      /ceilings\.maxTokens: must be a positive integer/,
    );
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, perAction: { maxAmountCents: 1 } }),
      /ceilings\.perAction\.byTool/,
    );
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, perAction: { maxAmountCents: 1, byTool: { refund: 0 } } }),
      /ceilings\.perAction\.byTool\.refund: must be a positive integer/,
    );
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, perAction: { maxAmountCents: 1, byTool: {}, maxRefundCents: 1 } }),
      /ceilings\.perAction\.maxRefundCents/,
    );
  });
});
