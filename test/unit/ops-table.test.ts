import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ActionListing } from '../../client';
import { queueColumns, sortOldestFirst } from '../../cli/ops/queue';
import { renderAction } from '../../cli/ops/show';
import { formatAge, renderFields, renderTable } from '../../cli/ops/table';
import type { ActionSnapshot } from '../../messages/action';

const NOW = new Date('2026-08-28T12:00:00Z');
const listing = (key: string, minutesAgo: number, extra: Partial<ActionListing> = {}): ActionListing => ({
  key,
  status: 'needs_review',
  operation: 'send-email',
  tenant: 'acme',
  running: true,
  startTime: new Date(NOW.getTime() - minutesAgo * 60_000),
  ...extra,
});

describe('table rendering', () => {
  it('pads columns to the widest cell, upper-cases headers and trims trailing spaces', () => {
    const text = renderTable(
      [
        { header: 'name', value: (r: { name: string; n: number }) => r.name },
        { header: 'n', value: (r) => String(r.n), align: 'right' },
      ],
      [
        { name: 'a', n: 5 },
        { name: 'longer', n: 120 },
      ],
    );
    assert.equal(text, ['NAME      N', 'a         5', 'longer  120'].join('\n'));
  });

  it('keeps each row on one line and clips long cells', () => {
    const text = renderTable(
      [{ header: 'reason', value: (r: string) => r, maxWidth: 10 }],
      ['line one\nline two', 'short'],
    );
    assert.deepEqual(text.split('\n'), ['REASON', 'line one…', 'short']);
  });

  it('prints only the header for no rows', () => {
    assert.equal(renderTable([{ header: 'key', value: (r: string) => r }], []), 'KEY');
  });

  it('aligns key/value fields and shows absent values as -', () => {
    assert.equal(
      renderFields([
        ['status', 'unknown'],
        ['provider ref', undefined],
      ]),
      'status:        unknown\nprovider ref:  -',
    );
  });
});

describe('ages', () => {
  it('reads at a glance from seconds to days', () => {
    assert.equal(formatAge(-5_000), '0s');
    assert.equal(formatAge(45_000), '45s');
    assert.equal(formatAge(12 * 60_000 + 59_000), '12m');
    assert.equal(formatAge((3 * 60 + 5) * 60_000), '3h 05m');
    assert.equal(formatAge((2 * 24 + 4) * 3_600_000), '2d 04h');
  });
});

describe('the review queue table', () => {
  it('lists the oldest action first with key, status, operation, tenant, age and provider ref', () => {
    const rows = sortOldestFirst([
      listing('send-email:v1:acme:new', 2),
      listing('charge:v1:acme:old', 180, { operation: 'charge', status: 'unknown', providerRef: 'ch_9' }),
      listing('send-email:v1:acme:mid', 30),
    ]);
    const lines = renderTable(queueColumns(NOW), rows).split('\n');
    assert.match(lines[0], /^KEY\s+STATUS\s+OPERATION\s+TENANT\s+AGE\s+PROVIDER REF$/);
    assert.match(lines[1], /^charge:v1:acme:old\s+unknown\s+charge\s+acme\s+3h 00m\s+ch_9$/);
    assert.match(lines[2], /^send-email:v1:acme:mid\s+needs_review\s+send-email\s+acme\s+30m\s+-$/);
    assert.match(lines[3], /^send-email:v1:acme:new\s/);
  });

  it('orders equal start times by key so repeated runs print the same list', () => {
    const rows = sortOldestFirst([listing('b:v1:t:e', 5), listing('a:v1:t:e', 5)]);
    assert.deepEqual(
      rows.map((r) => r.key),
      ['a:v1:t:e', 'b:v1:t:e'],
    );
  });
});

describe('one action in full', () => {
  const snapshot: ActionSnapshot = {
    key: 'send-email:v1:acme:evt-1',
    operation: 'send-email',
    tenant: 'acme',
    status: 'confirmed',
    requestHash: 'f'.repeat(64),
    owner: 'client:application',
    claimants: ['client:application', 'run:acme:evt-1'],
    summary: 'email "s" to a***@example.com',
    providerRef: 'msg_1',
    sends: 1,
    dispatches: 1,
    checks: [
      { at: '2026-08-28T11:00:05.000Z', kind: 'evidence', found: false, trustworthy: true, detail: 'no webhook' },
    ],
    audit: [
      { at: '2026-08-28T11:00:00.000Z', from: null, to: 'planned', reason: 'intent persisted' },
      {
        at: '2026-08-28T11:00:15.000Z',
        from: 'needs_review',
        to: 'confirmed',
        reason: 'operator: seen in provider dashboard',
        by: 'alice',
      },
    ],
  };

  it('shows the fields, every reconciliation check and the audit trail with who moved it', () => {
    const text = renderAction(snapshot);
    assert.match(text, /^key: +send-email:v1:acme:evt-1$/m);
    assert.match(text, /^request hash: +f{64}$/m);
    assert.match(text, /^claimants: +client:application, run:acme:evt-1$/m);
    assert.match(text, /^provider ref: +msg_1$/m);
    assert.match(text, /^error: +-$/m);
    assert.match(text, /^sends: +1 request\(s\) sent to the provider over 1 dispatch\(es\)$/m);
    assert.match(
      text,
      /Reconciliation checks:\n {2}AT +KIND +FOUND +TRUSTWORTHY +DETAIL\n {2}2026-08-28T11:00:05.000Z +evidence +no +yes +no webhook/,
    );
    assert.match(
      text,
      /Audit trail:\n {2}AT +FROM → TO +REASON +BY\n {2}2026-08-28T11:00:00.000Z +∅ → planned +intent persisted +-/,
    );
    assert.match(text, /needs_review → confirmed +operator: seen in provider dashboard +alice$/m);
  });

  it('says when there were no checks and shows the error', () => {
    const text = renderAction({
      ...snapshot,
      status: 'failed',
      checks: [],
      error: { code: 'BusinessRejected', message: 'recipient rejected' },
    });
    assert.match(text, /Reconciliation checks:\n {2}\(none\)/);
    assert.match(text, /^error: +BusinessRejected: recipient rejected$/m);
  });
});
