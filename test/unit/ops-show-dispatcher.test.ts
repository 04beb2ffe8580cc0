import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActionSnapshot } from '../../messages/action';
import { renderAction } from '../../cli/ops/show';

/** `ops show` says when the owner run, not the action, is sending the current dispatch. */
const dispatching: ActionSnapshot = {
  key: 'charge:v1:acme:evt-2',
  operation: 'charge',
  tenant: 'acme',
  status: 'dispatching',
  requestHash: 'b'.repeat(64),
  owner: 'run:acme:evt-2',
  claimants: ['run:acme:evt-2'],
  summary: 'charge 12.00 USD',
  sends: 0,
  dispatches: 1,
  checks: [],
  audit: [{ at: '2026-12-02T05:00:00.000Z', from: null, to: 'planned', reason: 'intent persisted' }],
};

describe('ops show: who sends', () => {
  it('names the owner run that sends the dispatch itself', () => {
    const text = renderAction({ ...dispatching, dispatcher: 'run:acme:evt-2' });
    assert.match(text, /sending: +its owner run:acme:evt-2 sends dispatch 1 itself; the action waits for its report/);
  });

  it('shows no sender when the action sends itself', () => {
    assert.match(renderAction(dispatching), /sending: +-/);
  });
});
