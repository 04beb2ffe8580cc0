import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActionSnapshot } from '../../messages/action';
import { renderAction } from '../../cli/ops/show';

/** `ops show` lists provider events that contradict the action, for a person to decide; none, no section. */

const base: ActionSnapshot = {
  key: 'charge:v1:acme:evt-1',
  operation: 'charge',
  tenant: 'acme',
  status: 'confirmed',
  requestHash: 'a'.repeat(64),
  owner: 'client:application',
  claimants: ['client:application'],
  summary: 'charge 49.90 USD',
  providerRef: 'ch_1',
  sends: 1,
  dispatches: 1,
  checks: [],
  audit: [{ at: '2026-08-28T11:00:00.000Z', from: null, to: 'planned', reason: 'intent persisted' }],
};

describe('ops show: conflicts', () => {
  it('shows each conflicting event with what it says and why it conflicts, before the audit trail', () => {
    const text = renderAction({
      ...base,
      events: [
        { eventId: 'evt_ok', type: 'charge.succeeded', providerRef: 'ch_1', outcome: 'succeeded' },
        { eventId: 'evt_fail', type: 'charge.failed', providerRef: 'ch_1', outcome: 'failed' },
      ],
      conflicts: [
        {
          at: '2026-08-28T11:00:03.000Z',
          eventId: 'evt_fail',
          type: 'charge.failed',
          outcome: 'failed',
          providerRef: 'ch_1',
          reason: 'says it failed, but the action is confirmed (ch_1)',
        },
      ],
    });
    assert.match(
      text,
      /Conflicts \(provider events that disagree[^\n]*\n {2}AT +EVENT +SAYS +CONFLICT\n {2}2026-08-28T11:00:03.000Z +charge\.failed evt_fail +failed ch_1 +says it failed, but the action is confirmed \(ch_1\)/,
    );
    assert.ok(text.indexOf('Conflicts') < text.indexOf('Audit trail'));
  });

  it('has no conflicts section when nothing conflicts', () => {
    assert.doesNotMatch(renderAction(base), /Conflicts/);
    assert.doesNotMatch(renderAction({ ...base, events: [], conflicts: [] }), /Conflicts/);
  });
});
