import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalProblems } from '../../scripts/chaos/scenario-approval';
import type { AuditEntry, ActionSnapshot } from '../../messages/action';

/** The approval scenario's verdict on one action: it must be able to say "charged without approval". */
const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function snapshot(audit: AuditEntry[], approvedBy?: string): ActionSnapshot {
  return {
    key: 'charge:v1:chaos:e1',
    operation: 'charge',
    tenant: 'chaos',
    status: 'confirmed',
    requestHash: 'h',
    owner: 'run:chaos:e1',
    claimants: ['run:chaos:e1'],
    summary: 'charge',
    sends: 1,
    dispatches: 1,
    checks: [],
    audit,
    ...(approvedBy ? { approvedBy } : {}),
  } as ActionSnapshot;
}

const approvedAudit: AuditEntry[] = [
  { at: at(0), from: null, to: 'planned', reason: 'intent persisted' },
  { at: at(10), from: 'planned', to: 'awaiting_confirmation', reason: 'confirm: amount' },
  {
    at: at(900),
    from: 'awaiting_confirmation',
    to: 'awaiting_confirmation',
    reason: 'approved (key k1, expires x)',
    by: 'ann',
  },
  { at: at(901), from: 'awaiting_confirmation', to: 'dispatching', reason: 'dispatch' },
  { at: at(950), from: 'dispatching', to: 'confirmed', reason: 'provider replied' },
];

describe('chaos approval check', () => {
  it('passes one charge committed after the one accepted approval', () => {
    const problems = approvalProblems(snapshot(approvedAudit, 'ann'), { accepted: true, sentAtMs: T0 + 800 }, [
      { id: 'ch_1', committedAt: at(940) },
    ]);
    assert.deepEqual(problems, []);
  });

  it('flags a charge committed before any approval was sent', () => {
    const problems = approvalProblems(snapshot(approvedAudit, 'ann'), { accepted: true, sentAtMs: T0 + 800 }, [
      { id: 'ch_1', committedAt: at(500) },
    ]);
    assert.deepEqual(problems, ['charge ch_1 was committed before any approval was sent']);
  });

  it('flags an action that never asked for a confirmation and charged', () => {
    const audit = approvedAudit.filter((a) => a.to !== 'awaiting_confirmation' && a.from !== 'awaiting_confirmation');
    const problems = approvalProblems(snapshot(audit), { accepted: false }, [{ id: 'ch_1', committedAt: at(940) }]);
    assert.ok(problems.includes('never waited for a confirmation'), problems.join('; '));
    assert.ok(problems.includes('charged without a recorded approval'), problems.join('; '));
    assert.ok(problems.includes('charged, yet the approval was never accepted'), problems.join('; '));
  });

  it('flags two accepted approvals and an unreadable action', () => {
    const twice = [...approvedAudit.slice(0, 3), approvedAudit[2], ...approvedAudit.slice(3)];
    assert.deepEqual(approvalProblems(snapshot(twice, 'ann'), { accepted: true, sentAtMs: T0 }, []), [
      'accepted 2 approvals',
    ]);
    assert.deepEqual(approvalProblems(undefined, { accepted: true }, []), [
      'the action could not be read to check its approval',
    ]);
  });
});
