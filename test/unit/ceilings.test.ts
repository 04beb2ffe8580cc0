import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RUN_CEILINGS,
  assertWithinCeilings,
  checkCeilings,
  parseRunCeilings,
  raiseCeiling,
  resolveRunCeilings,
  type CeilingName,
  type CeilingVerdict,
  type RunCeilings,
  type RunUsage,
} from '../../policies/ceilings';
import { RetrysafeError } from '../../policies/errors';
import { parseIntent } from '../../policies/intents';

const START = Date.parse('2026-08-28T10:00:00.000Z');
const CEILINGS: RunCeilings = {
  maxSteps: 10,
  deadlineMs: 60_000,
  maxSpendCents: 20_000,
  maxTokens: 1_000,
  maxSideEffects: 3,
  perAction: { maxRefundCents: 5_000, maxChargeCents: 15_000 },
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
  parseIntent({
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'c1',
    paymentMethod: 'pm1',
    merchantReference: 'A-1',
  });
const refund = (amountCents: number) =>
  parseIntent({ operation: 'refund', chargeId: 'ch_1', amountCents, merchantReference: 'A-1' });
const ticket = parseIntent({ operation: 'create-ticket', externalRef: 'T-1', title: 't', body: 'b' });

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
    assert.deepEqual(checkCeilings(usage(), CEILINGS, START, { kind: 'effect', intent: charge(4_990) }), { ok: true });
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
    assert.equal(
      checkCeilings(usage({ sideEffects: 2 }), CEILINGS, START, { kind: 'effect', intent: ticket }).ok,
      true,
    );
    trips(
      checkCeilings(usage({ sideEffects: 3 }), CEILINGS, START, { kind: 'effect', intent: ticket }),
      'side-effects',
      3,
      4,
    );
    assert.equal(
      checkCeilings(usage({ sideEffects: 3 }), CEILINGS, START, { kind: 'tool' }).ok,
      true,
      'reads are not side effects',
    );
  });

  it('spend: moving money up to the limit passes, a cent more trips', () => {
    assert.equal(
      checkCeilings(usage({ spendCents: 10_000 }), CEILINGS, START, { kind: 'effect', intent: charge(10_000) }).ok,
      true,
    );
    trips(
      checkCeilings(usage({ spendCents: 10_000 }), CEILINGS, START, { kind: 'effect', intent: charge(10_001) }),
      'spend',
      20_000,
      20_001,
    );
    trips(
      checkCeilings(usage({ spendCents: 18_000 }), CEILINGS, START, { kind: 'effect', intent: refund(2_001) }),
      'spend',
      20_000,
      20_001,
    );
  });

  it('per-action refund limit: at the limit passes, above trips and names what to raise', () => {
    assert.equal(checkCeilings(usage(), CEILINGS, START, { kind: 'effect', intent: refund(5_000) }).ok, true);
    const verdict = checkCeilings(usage(), CEILINGS, START, { kind: 'effect', intent: refund(5_001) });
    trips(verdict, 'per-action', 5_000, 5_001);
    assert.equal(!verdict.ok && verdict.raise, 'per-action.refund');
  });

  it('per-action charge limit', () => {
    assert.equal(checkCeilings(usage(), CEILINGS, START, { kind: 'effect', intent: charge(15_000) }).ok, true);
    trips(
      checkCeilings(usage(), CEILINGS, START, { kind: 'effect', intent: charge(15_001) }),
      'per-action',
      15_000,
      15_001,
    );
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
    assert.equal(raised.perAction.maxRefundCents, 8_000);
    assert.equal(raised.perAction.maxChargeCents, 15_000);
    assert.equal(CEILINGS.perAction.maxRefundCents, 5_000);
    assert.equal(checkCeilings(usage(), raised, START, { kind: 'effect', intent: refund(5_001) }).ok, true);
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
      perAction: { maxRefundCents: 5_000, maxChargeCents: 30_000 },
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
    assert.throws(() => raiseCeiling(CEILINGS, { ceiling: 'steps', newLimit: 20 }, ' '), field('operator'));
  });
});

describe('defaults and overrides', () => {
  it('defaults are valid ceilings', () => {
    assert.deepEqual(parseRunCeilings(DEFAULT_RUN_CEILINGS), DEFAULT_RUN_CEILINGS);
  });

  it('resolves partial overrides over the defaults', () => {
    const c = resolveRunCeilings({ maxSteps: 5, perAction: { maxChargeCents: 1_000 } });
    assert.equal(c.maxSteps, 5);
    assert.equal(c.perAction.maxChargeCents, 1_000);
    assert.equal(c.perAction.maxRefundCents, DEFAULT_RUN_CEILINGS.perAction.maxRefundCents);
    assert.deepEqual(resolveRunCeilings(undefined), DEFAULT_RUN_CEILINGS);
  });

  it('names the bad field of ceilings from input', () => {
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, maxTokens: -1 }),
      /ceilings\.maxTokens: must be a positive integer/,
    );
    assert.throws(
      () => parseRunCeilings({ ...CEILINGS, perAction: { maxRefundCents: 1 } }),
      /ceilings\.perAction\.maxChargeCents/,
    );
  });
});
