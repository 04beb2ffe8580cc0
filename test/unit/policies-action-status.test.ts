import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ACTION_STATUSES,
  FINAL_STATUSES,
  canTransition,
  isFinal,
  transition,
  type ActionStatus,
} from '../../policies/action-status';
import { RetrysafeError } from '../../policies/errors';

/**
 * The legal moves, written out here independently of the module so that a change to either side
 * fails a test. Every pair not listed must be refused.
 */
const LEGAL_MOVES: ReadonlyArray<readonly [ActionStatus, ActionStatus]> = [
  ['planned', 'awaiting_confirmation'],
  ['planned', 'dispatching'],
  ['planned', 'failed'],
  ['planned', 'needs_review'],
  ['awaiting_confirmation', 'dispatching'],
  ['awaiting_confirmation', 'failed'],
  ['awaiting_confirmation', 'needs_review'],
  ['dispatching', 'confirmed'],
  ['dispatching', 'failed'],
  ['dispatching', 'unknown'],
  ['dispatching', 'needs_review'],
  ['unknown', 'confirmed'],
  ['unknown', 'failed'],
  ['unknown', 'dispatching'], // reconciliation proved absence: resend with the same key
  ['unknown', 'needs_review'],
  ['needs_review', 'confirmed'],
  ['needs_review', 'failed'],
  ['needs_review', 'dispatching'],
  ['needs_review', 'compensating'],
  ['confirmed', 'compensating'],
  ['confirmed', 'needs_review'],
  ['compensating', 'compensated'],
  ['compensating', 'needs_review'],
];

const isLegal = (from: ActionStatus, to: ActionStatus) => LEGAL_MOVES.some(([f, t]) => f === from && t === to);

describe('effect status machine', () => {
  it('has exactly the nine documented statuses', () => {
    assert.deepEqual([...ACTION_STATUSES].sort(), [
      'awaiting_confirmation',
      'compensated',
      'compensating',
      'confirmed',
      'dispatching',
      'failed',
      'needs_review',
      'planned',
      'unknown',
    ]);
  });

  it('the legal-move table in this test has no duplicates and only known statuses', () => {
    const seen = new Set(LEGAL_MOVES.map(([f, t]) => `${f}->${t}`));
    assert.equal(seen.size, LEGAL_MOVES.length);
    for (const [f, t] of LEGAL_MOVES) {
      assert.ok(ACTION_STATUSES.includes(f) && ACTION_STATUSES.includes(t), `${f} -> ${t}`);
    }
  });

  describe('allows every legal move', () => {
    for (const [from, to] of LEGAL_MOVES) {
      it(`allows ${from} -> ${to}`, () => {
        assert.equal(canTransition(from, to), true);
        assert.equal(transition(from, to), to);
      });
    }
  });

  it('refuses every one of the other pairs over ACTION_STATUSES with IllegalTransition', () => {
    let checked = 0;
    let refused = 0;
    for (const from of ACTION_STATUSES) {
      for (const to of ACTION_STATUSES) {
        checked++;
        if (isLegal(from, to)) continue;
        refused++;
        assert.equal(canTransition(from, to), false, `${from} -> ${to} should be illegal`);
        assert.throws(
          () => transition(from, to),
          (err: unknown) => {
            assert.ok(err instanceof RetrysafeError, `${from} -> ${to}: expected a RetrysafeError`);
            assert.equal(err.code, 'IllegalTransition');
            assert.deepEqual(err.details, { from, to });
            assert.match(err.message, new RegExp(`${from}.*${to}`));
            return true;
          },
        );
      }
    }
    assert.equal(checked, 81);
    assert.equal(refused, 81 - LEGAL_MOVES.length);
  });

  for (const from of ACTION_STATUSES) {
    it(`from ${from}, allows exactly the moves in the table`, () => {
      const allowed = ACTION_STATUSES.filter((to) => canTransition(from, to));
      const expected = ACTION_STATUSES.filter((to) => isLegal(from, to));
      assert.deepEqual(allowed, expected);
    });
  }

  it('never lets a status move to itself', () => {
    for (const s of ACTION_STATUSES) assert.equal(canTransition(s, s), false, s);
  });

  it('refusals are non-retryable bugs', () => {
    try {
      transition('failed', 'dispatching');
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.equal(err.retryable, false);
      assert.equal(err.toFailure().nonRetryable, true);
    }
  });
});

describe('final statuses', () => {
  it('are exactly confirmed, failed and compensated', () => {
    assert.deepEqual([...FINAL_STATUSES].sort(), ['compensated', 'confirmed', 'failed']);
  });

  it('isFinal is true for final statuses and false for every other status', () => {
    const finals = new Set<ActionStatus>(['confirmed', 'failed', 'compensated']);
    for (const s of ACTION_STATUSES) assert.equal(isFinal(s), finals.has(s), s);
  });

  it('have no way out except confirmed -> compensating and confirmed -> needs_review', () => {
    const exits = FINAL_STATUSES.flatMap((from) =>
      ACTION_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    assert.deepEqual(exits.sort(), ['confirmed->compensating', 'confirmed->needs_review']);
  });

  it('failed and compensated are dead ends', () => {
    for (const to of ACTION_STATUSES) {
      assert.equal(canTransition('failed', to), false);
      assert.equal(canTransition('compensated', to), false);
    }
  });
});

describe('reachability', () => {
  function reachableFrom(start: ActionStatus): Set<ActionStatus> {
    const seen = new Set<ActionStatus>([start]);
    const queue = [start];
    while (queue.length) {
      const from = queue.shift()!;
      for (const to of ACTION_STATUSES) {
        if (canTransition(from, to) && !seen.has(to)) {
          seen.add(to);
          queue.push(to);
        }
      }
    }
    return seen;
  }

  it('every status can be reached from planned', () => {
    assert.deepEqual([...reachableFrom('planned')].sort(), [...ACTION_STATUSES].sort());
  });

  it('every open status can still reach a final status', () => {
    for (const s of ACTION_STATUSES.filter((x) => !isFinal(x))) {
      const finals = [...reachableFrom(s)].filter(isFinal);
      assert.ok(finals.length > 0, `${s} cannot finish`);
    }
  });

  it('every open status can be stopped for review in one move', () => {
    for (const s of ACTION_STATUSES.filter((x) => !isFinal(x) && x !== 'needs_review')) {
      assert.equal(canTransition(s, 'needs_review'), true, s);
    }
  });

  it('compensated can only be reached through compensating', () => {
    for (const from of ACTION_STATUSES) {
      assert.equal(canTransition(from, 'compensated'), from === 'compensating', from);
    }
  });

  it('nothing reaches unknown except a dispatch', () => {
    for (const from of ACTION_STATUSES) {
      assert.equal(canTransition(from, 'unknown'), from === 'dispatching', from);
    }
  });
});
