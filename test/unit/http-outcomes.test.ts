import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outcomeOfError, outcomeOfResponse, ProviderTransportError } from '../../transport/http';
import { outcomeOfStatus } from '../../policies/tool-outcome';

/** What an HTTP answer proves about a provider's effect: only proof counts as "nothing was done". */
describe('the outcome an HTTP status means', () => {
  const kind = (status: number, rules = {}) => outcomeOfStatus(status, `HTTP ${status}`, rules)?.outcome;

  it('treats 500, 502, 503 and 504 as ambiguous by default: the request may have committed behind them', () => {
    for (const status of [500, 502, 503, 504, 599]) assert.equal(kind(status), 'ambiguous', String(status));
  });

  it('treats 429 as not committed, and a status the provider documents so', () => {
    assert.equal(kind(429), 'not-committed');
    assert.equal(kind(503, { notCommittedStatuses: [503] }), 'not-committed');
    assert.equal(kind(502, { notCommittedStatuses: [503] }), 'ambiguous', 'only the documented status');
  });

  it('refuses for good on the 4xx it understands, and commits on 2xx', () => {
    assert.equal(kind(200), undefined);
    assert.deepEqual(outcomeOfStatus(409, 'x'), { outcome: 'rejected', reason: 'conflict', message: 'x', status: 409 });
    assert.equal((outcomeOfStatus(403, 'x') as { reason: string }).reason, 'unauthorized');
    assert.equal((outcomeOfStatus(402, 'x') as { reason: string }).reason, 'declined');
    assert.equal((outcomeOfStatus(400, 'x') as { reason: string }).reason, 'invalid');
  });

  it('reads a status an SDK throws the same way, with the provider’s rules', () => {
    const thrown = Object.assign(new Error('Bad Gateway'), { statusCode: 502 });
    assert.equal(outcomeOfError(thrown).outcome, 'ambiguous');
    const shed = Object.assign(new Error('Service Unavailable'), { status: 503 });
    assert.equal(outcomeOfError(shed).outcome, 'ambiguous');
    assert.equal(outcomeOfError(shed, 'send', { notCommittedStatuses: [503] }).outcome, 'not-committed');
    assert.equal(outcomeOfError(new ProviderTransportError('not-sent', 'ECONNREFUSED')).outcome, 'not-committed');
    assert.equal(outcomeOfError(new ProviderTransportError('ambiguous', 'ECONNRESET')).outcome, 'ambiguous');
  });

  it('maps a response with its status rules and says whether the provider replayed the key', () => {
    const res = (status: number, body: unknown) => ({ status, body, headers: new Headers() });
    assert.equal(outcomeOfResponse(res(502, {}), () => 'x').outcome, 'ambiguous');
    assert.equal(outcomeOfResponse(res(503, {}), () => 'x', { notCommittedStatuses: [503] }).outcome, 'not-committed');
    assert.deepEqual(
      outcomeOfResponse(res(200, { id: 'ch_1' }), (b) => (b as { id: string }).id, { replayed: true }),
      {
        outcome: 'committed',
        providerRef: 'ch_1',
        result: { id: 'ch_1' },
        replayed: true,
      },
    );
  });
});
