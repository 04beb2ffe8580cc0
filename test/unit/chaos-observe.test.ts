import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ActionLedger, LedgerRow } from 'retrysafe/worker';
import { actionState, leftUnresolved } from '../../scripts/chaos/observe';

/** A client for which no action workflow exists: the state comes from the ledger's row. */
const noWorkflows = {
  workflow: {
    getHandle: (id: string) => ({
      describe: () => Promise.reject(new WorkflowNotFoundError('not found', id, undefined)),
    }),
  },
} as unknown as Client;

function ledgerWith(status: string) {
  const key = 'reserve:v1:acme:evt-3';
  const ledger: Pick<ActionLedger, 'get' | 'audit' | 'alarms'> = {
    get: async () => ({ key, status, holder: 'run:acme:evt-3/t#1' }) as unknown as LedgerRow,
    audit: async () => [
      { key, seq: 3, status: 'confirmed', at: '2026-12-07T03:26:30.000Z', reason: 'reserved', by: 'run:acme:evt-3' },
      {
        key,
        seq: 4,
        status: 'compensating',
        at: '2026-12-07T03:27:47.000Z',
        reason: 'compensation release:v1:acme:evt-3 claimed',
        by: 'run:acme:evt-3',
      },
    ],
    alarms: async () => [
      { id: 1, key, at: '2026-12-07T03:27:48.000Z', kind: 'not-holder', detail: 'held by reconciler:w2' },
    ],
  };
  return { key, ledger };
}

describe('chaos observation of a row no workflow holds', () => {
  it('reports a row left unsettled with its audit trail, holder and alarms', async () => {
    const { key, ledger } = ledgerWith('compensating');
    const state = await actionState(noWorkflows, key, ledger);
    assert.equal(state?.source, 'ledger');
    const [reason] = leftUnresolved([state]);
    assert.match(reason, /^reserve:v1:acme:evt-3 left compensating on its ledger row, with no workflow; its trail: /);
    assert.match(reason, /3 confirmed at 2026-12-07T03:26:30\.000Z by run:acme:evt-3 \(reserved\) → 4 compensating/);
    assert.match(reason, /holder run:acme:evt-3\/t#1/);
    assert.match(reason, /alarm not-holder at 2026-12-07T03:27:48\.000Z: held by reconciler:w2/);
  });

  it('reads no trail for a settled row, and reports nothing for it', async () => {
    const { key, ledger } = ledgerWith('compensated');
    const state = await actionState(noWorkflows, key, ledger);
    assert.deepEqual(state, { key, status: 'compensated', running: false, source: 'ledger' });
    assert.deepEqual(leftUnresolved([state]), []);
  });
});
