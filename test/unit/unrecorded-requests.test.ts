import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withReadableHolders } from '../../cli/ops/holders';
import { sendsLine } from '../../cli/ops/show';
import { unrecordedRequests } from '../../client/unrecorded-requests';
import { withRecord } from '../../client';
import type { ActionSnapshot, AuditEntry, RecordedRequest } from '../../messages/action';
import type { ActionStatus } from '../../policies/action-status';

/** What the ledger row's trail and the requests kept say about requests that may have reached the provider unkept. */

const at = (s: number) => new Date(Date.UTC(2026, 11, 6, 2, 0, s)).toISOString();
function trail(...moves: Array<[number, ActionStatus, string?]>): AuditEntry[] {
  return moves.map(([s, to, reason], i) => ({
    at: at(s),
    from: i === 0 ? null : moves[i - 1][1],
    to,
    reason: reason ?? to,
  }));
}
const send = (s: number, attempt: number, dispatch = 1): RecordedRequest => ({
  kind: 'send',
  attempt,
  dispatch,
  at: at(s),
  answer: 'committed ch_1',
});

describe('requests that may have reached the provider, unrecorded', () => {
  it('counts a dispatch on record after which nothing was recorded (a key-less send lost with its worker)', () => {
    const row = trail([0, 'planned'], [1, 'dispatching'], [3, 'unknown']);
    assert.equal(unrecordedRequests(row, []), 1);
  });

  it('does not count the dispatch an action workflow restates when it takes the row over from a run', () => {
    const row = trail(
      [0, 'planned'],
      [1, 'dispatching', 'dispatch, by the run'],
      [3, 'unknown'],
      [4, 'planned', 'intent persisted'],
      [5, 'dispatching', "dispatched by the run's act"],
      [6, 'unknown'],
      [9, 'needs_review'],
    );
    assert.equal(unrecordedRequests(row, []), 1);
  });

  it('counts a dispatch that follows a taken-over row that had not been dispatched', () => {
    const row = trail([0, 'planned'], [4, 'planned', 'intent persisted'], [5, 'dispatching'], [6, 'unknown']);
    assert.equal(unrecordedRequests(row, []), 1);
  });

  it('counts earlier attempts of a dispatch that left no request (the row written once, two attempts sent)', () => {
    const row = trail([0, 'planned'], [1, 'dispatching'], [5, 'confirmed']);
    assert.equal(unrecordedRequests(row, [send(4, 2)]), 1);
    assert.equal(unrecordedRequests(row, [send(1, 1), send(4, 2)]), 0);
  });

  it('counts an attempt once when both traces point at it, and nothing when every dispatch has its request', () => {
    const resent = trail([0, 'planned'], [1, 'dispatching'], [4, 'dispatching'], [5, 'confirmed']);
    assert.equal(unrecordedRequests(resent, [send(4, 2)]), 1);
    assert.equal(unrecordedRequests(resent, [send(1, 1), send(4, 2)]), 0);
  });
});

describe('withRecord', () => {
  const snapshot = (audit: AuditEntry[], extra: Partial<ActionSnapshot> = {}): ActionSnapshot => ({
    key: 'charge:v1:acme:e1',
    operation: 'charge',
    tenant: 'acme',
    status: 'confirmed',
    requestHash: 'a'.repeat(64),
    owner: 'run:acme:e1',
    claimants: ['run:acme:e1'],
    summary: 'charge',
    sends: 0,
    dispatches: 1,
    checks: [],
    audit,
    ...extra,
  });

  it("keeps a run's resend entry once, though the run's act reports the ledger's trail as its own", () => {
    const row = trail([0, 'planned'], [1, 'dispatching'], [4, 'dispatching', 'resend'], [5, 'confirmed']);
    const view = withRecord(snapshot(row, { sends: 2, requests: [send(1, 1), send(4, 2)] }), snapshot(row));
    assert.deepEqual(view.audit, row);
    assert.equal(view.unrecordedSends, undefined);
  });

  it('carries the count of unrecorded requests into the view', () => {
    const row = trail([0, 'planned'], [1, 'dispatching'], [5, 'confirmed']);
    const view = withRecord(snapshot(row, { sends: 1, requests: [send(4, 2)] }), snapshot(row));
    assert.equal(view.unrecordedSends, 1);
    assert.equal(
      sendsLine(view),
      'up to 2 request(s) to the provider over 1 dispatch(es): 1 recorded; 1 request may have reached the provider, unrecorded',
    );
  });
});

describe('ops show: holders in reasons', () => {
  it("names a run's act by its run and attempt, without the doubled run: prefix or its token", () => {
    assert.equal(
      withReadableHolders(
        "dispatched by the run's act (run:run:acme:evt-1/9058691d-0549-47b3-b5ac-e145a3bce1e4#2); the row said unknown",
      ),
      "dispatched by the run's act (run:acme:evt-1, attempt 2); the row said unknown",
    );
    assert.equal(
      withReadableHolders('held by run:run:acme:evt-2/9058691d-0549-47b3-b5ac-e145a3bce1e4#12.1'),
      'held by run:acme:evt-2, attempt 1 (task at event 12)',
    );
    assert.equal(withReadableHolders('taken by action:0f3c'), 'taken by action:0f3c');
  });
});
