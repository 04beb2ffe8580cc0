import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActionSnapshot, DispatchReport } from '../../messages/action';
import type { ProviderRequest } from '../../policies/provider-requests';
import { ownerViewAfterReport, parseDispatchReport, reportedMove } from '../../messages/dispatch-report';

/**
 * An owner's dispatch report is input from outside the action workflow: it is rebuilt field by field,
 * and what it means (the status change) is derived in one place for the action and for the owner.
 */
const request: ProviderRequest = { kind: 'send', attempt: 1, at: '2026-12-02T05:00:00.000Z', answer: 'committed ch_1' };

describe('dispatch reports', () => {
  it('takes a well-formed report of each kind, keeping only the known fields', () => {
    const confirmed = parseDispatchReport({
      token: 't',
      report: {
        kind: 'outcome',
        outcome: {
          status: 'confirmed',
          providerRef: 'ch_1',
          record: { id: 'ch_1' },
          via: 'send',
          sends: 1,
          requests: [{ ...request, extra: 'x' }],
        },
        extra: true,
      },
    });
    assert.deepEqual(confirmed, {
      token: 't',
      report: {
        kind: 'outcome',
        outcome: {
          status: 'confirmed',
          providerRef: 'ch_1',
          record: { id: 'ch_1' },
          via: 'send',
          sends: 1,
          requests: [request],
        },
      },
    });
    const rejected = parseDispatchReport({
      token: 't',
      report: { kind: 'rejected', code: 'BusinessRejected', message: 'declined', sends: 1 },
    });
    assert.deepEqual(rejected, {
      token: 't',
      report: { kind: 'rejected', code: 'BusinessRejected', message: 'declined', sends: 1 },
    });
    const none = parseDispatchReport({ token: 't', report: { kind: 'no-verdict', message: 'timed out', sends: 0 } });
    assert.deepEqual(none, { token: 't', report: { kind: 'no-verdict', message: 'timed out', sends: 0 } });
  });

  it('reads a malformed request log as empty instead of failing the workflow on it', () => {
    const parsed = parseDispatchReport({
      token: 't',
      report: { kind: 'outcome', outcome: { status: 'unknown', reason: 'reset', sends: 'many', requests: {} } },
    });
    assert.deepEqual(parsed, {
      token: 't',
      report: { kind: 'outcome', outcome: { status: 'unknown', reason: 'reset', sends: 0 } },
    });
  });

  it('refuses what it cannot take, naming why', () => {
    const problems = [
      [undefined, /no token/],
      [{ token: '' }, /no token/],
      [{ token: 't' }, /no report/],
      [{ token: 't', report: { kind: 'outcome', outcome: { status: 'confirmed', via: 'send' } } }, /providerRef/],
      [
        {
          token: 't',
          report: { kind: 'outcome', outcome: { status: 'confirmed', providerRef: 'x'.repeat(257), via: 'send' } },
        },
        /providerRef of 1 to 256/,
      ],
      [
        {
          token: 't',
          report: { kind: 'outcome', outcome: { status: 'confirmed', providerRef: 'ch_1', via: 'magic' } },
        },
        /via send, replay or lookup/,
      ],
      [{ token: 't', report: { kind: 'outcome', outcome: { status: 'unknown' } } }, /neither confirmed/],
      [{ token: 't', report: { kind: 'rejected', code: 'NotACode', message: 'x' } }, /known error code/],
      [{ token: 't', report: { kind: 'no-verdict' } }, /needs a message/],
      [{ token: 't', report: { kind: 'applied' } }, /unknown kind "applied"/],
    ] as const;
    for (const [signal, why] of problems) {
      const parsed = parseDispatchReport(signal);
      assert.ok('problem' in parsed, JSON.stringify(signal));
      assert.match(parsed.problem, why, JSON.stringify(signal));
    }
  });

  it('moves the owner’s view as the action moves the action', () => {
    const claimed: ActionSnapshot = {
      key: 'charge:v1:acme:e',
      operation: 'charge',
      tenant: 'acme',
      status: 'dispatching',
      requestHash: 'a'.repeat(64),
      owner: 'run:acme:e',
      claimants: ['run:acme:e'],
      summary: 'charge',
      sends: 0,
      dispatches: 1,
      checks: [],
      audit: [{ at: 'x', from: null, to: 'planned', reason: 'intent persisted' }],
      dispatcher: 'run:acme:e',
    };
    const report: DispatchReport = {
      kind: 'rejected',
      code: 'BusinessRejected',
      message: 'card declined',
      sends: 1,
      requests: [request],
    };
    const view = ownerViewAfterReport({ ...claimed, sendGranted: true } as ActionSnapshot, report);
    assert.equal(view.status, 'failed');
    assert.deepEqual(view.error, { code: 'BusinessRejected', message: 'BusinessRejected: card declined' });
    assert.equal(view.sends, 1);
    assert.deepEqual(view.requests, [{ ...request, dispatch: 1 }]);
    assert.equal(view.dispatcher, undefined);
    assert.equal((view as { sendGranted?: boolean }).sendGranted, undefined);
    assert.equal(view.audit.length, 2, 'one entry, as the action adds one for the move');
    assert.equal(view.audit[1].reason, reportedMove(report).reason);
    assert.equal(claimed.sends, 0, 'the claim’s answer itself is left as it was');
  });
});
