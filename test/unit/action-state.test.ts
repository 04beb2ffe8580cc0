import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ActionState } from '../../workflows/action/state';
import { Evidence } from '../../workflows/action/evidence';
import type { ActionInput, ProviderEvent, ReconciliationCheck } from '../../messages/action';

const input: ActionInput = {
  key: 'charge:v1:acme:evt-1',
  intent: { operation: 'charge', amountCents: 100 },
  requestHash: 'a'.repeat(64),
  tenant: 'acme',
  owner: 'run:acme:evt-1',
};

describe('ActionState: every change goes through the status machine', () => {
  it('refuses an illegal move before it changes anything, whatever the move carries', async () => {
    const state = new ActionState(input);
    const before = state.snapshot();
    await assert.rejects(
      state.move('confirmed', 'skipping dispatch', { providerRef: 'ch_1', error: { code: 'X', message: 'y' } }),
      (err: Error & { code?: string }) => /cannot go from planned to confirmed/.test(err.message),
    );
    assert.deepEqual(state.snapshot(), before);
    await assert.rejects(state.move('compensated', 'undo of nothing'), /cannot go from planned to compensated/);
    assert.equal(state.status, 'planned');
    assert.equal(state.snapshot().audit.length, 1);
  });

  it('hands out copies: a snapshot changed by its reader does not change the action', () => {
    const state = new ActionState(input);
    const snap = state.snapshot();
    snap.audit.push({ at: 'x', from: 'planned', to: 'confirmed', reason: 'forged' });
    snap.claimants.push('run:other');
    snap.status = 'confirmed';
    assert.equal(state.status, 'planned');
    assert.deepEqual(state.snapshot().claimants, [input.owner]);
    assert.equal(state.snapshot().audit.length, 1);
  });
});

describe('Evidence: provider events are weighed, never applied', () => {
  const event = (id: string, ref: string | undefined, outcome: ProviderEvent['outcome'] = 'succeeded') => ({
    eventId: id,
    type: 'charge.succeeded',
    key: input.key,
    outcome,
    ...(ref ? { providerRef: ref } : {}),
  });
  const make = () => {
    const checks: ReconciliationCheck[] = [];
    return {
      checks,
      evidence: new Evidence(
        input.key,
        (c) => checks.push(c),
        () => '2026-12-04T00:00:00.000Z',
      ),
    };
  };

  it('keeps one event per ID, and none for another key or with no outcome', () => {
    const { evidence } = make();
    evidence.receive(event('e1', 'ch_1'));
    evidence.receive(event('e1', 'ch_2'));
    evidence.receive({ ...event('e2', 'ch_1'), key: 'charge:v1:acme:other' });
    evidence.receive({ ...event('e3', 'ch_1'), outcome: 'maybe' as never });
    assert.deepEqual(
      evidence.all.map((e) => [e.eventId, e.providerRef]),
      [['e1', 'ch_1']],
    );
  });

  it('an event a lookup agrees with is trusted once; one naming another ref becomes a conflict', () => {
    const { evidence, checks } = make();
    evidence.receive(event('e1', 'ch_1'));
    evidence.receive(event('e2', 'ch_9'));
    const agreeing = evidence.weighAgainstLookup('ch_1');
    assert.deepEqual(
      agreeing.map((e) => e.eventId),
      ['e1'],
    );
    assert.deepEqual(
      checks.map((c) => [c.trustworthy, c.found]),
      [
        [true, true],
        [false, true],
      ],
    );
    assert.equal(evidence.weighAgainstLookup('ch_1').length, 0, 'each event is weighed once');
    const conflicts = evidence.conflicts('confirmed', 'ch_1');
    assert.deepEqual(
      conflicts.map((c) => [c.eventId, c.reason]),
      [['e2', 'names ch_9, but the lookup found ch_1']],
    );
  });

  it('a lookup after the lag that finds nothing refutes every success event', () => {
    const { evidence } = make();
    evidence.receive(event('e1', 'ch_1'));
    assert.equal(evidence.weighAgainstAbsence().length, 1);
    assert.equal(evidence.unweighed(true), undefined);
    assert.match(evidence.conflicts('unknown', undefined)[0].reason, /lookup after the read-after-write lag/);
  });
});
