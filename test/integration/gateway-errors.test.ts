import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { acmeCharge } from '../support/intents';
import { countForKey, countWhere } from '../support/ledger';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus } from '../support/wait';

/**
 * A provider that commits and then answers 502 or 504, as through a gateway that gave up on its reply. An error
 * status proves nothing, so the executor treats it as a reply that may have committed: a keyed provider is asked
 * again with the same key and answers with the original; a key-less one is never asked again, and the action goes
 * to unknown and then to a person. Effects are counted at the provider.
 */
describe('a provider that commits and then answers 502 or 504', () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ providerKinds: ['payments', 'email'] });
    await stack.startWorker();
  });
  after(async () => {
    await stack?.stop();
  });

  for (const status of [502, 504]) {
    it(`charges once with the key after a ${status}: the resend gets the original`, async () => {
      const eventId = uniqueEvent(`gateway-${status}-charge`);
      await stack.providers.payments.setFaults([
        { op: 'charges.create', kind: 'status-after-commit', status, times: 1 },
      ]);
      const action = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, acmeCharge(eventId, 1_990), {
        wait: true,
        timeoutMs: 30_000,
      });
      assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
      const counts = countForKey(await stack.providers.payments.ledger(), action.key);
      assert.deepEqual(
        [counts.records, counts.committed, counts.replayed],
        [1, 1, 1],
        'one charge; the second request carried the same key and was answered from it',
      );
      assert.equal(action.sends, 2);
      assert.match(action.requests?.[0]?.answer ?? '', new RegExp(`ambiguous .*HTTP ${status}`));
      assert.match(action.requests?.[1]?.answer ?? '', /the original, replayed/);
    });

    it(`sends one key-less email after a ${status} and leaves it to a person, never resending`, async () => {
      const eventId = uniqueEvent(`gateway-${status}-email`);
      await stack.providers.email.setFaults([{ op: 'messages.create', kind: 'status-after-commit', status, times: 1 }]);
      const claimed = await stack.retrysafe.claimAction(
        { tenant: 'acme', eventId },
        {
          operation: 'send-email',
          to: 'pat@example.com',
          subject: 'Your receipt',
          body: 'Thank you.',
          template: 'renewal-receipt',
        },
      );
      const review = await waitForStatus(stack.retrysafe, claimed.key, 'needs_review', { timeoutMs: 60_000 });
      const path = review.audit.map((e) => e.to);
      assert.ok(path.includes('unknown'), `it went through unknown: ${path.join(' → ')}`);
      assert.equal(review.sends, 1);
      const messages = countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.reference === claimed.key);
      assert.equal(messages, 1, 'the email was sent once and never again');
      assert.equal(
        (await stack.providers.email.ledger()).requests.filter((r) => r.reference === claimed.key).length,
        1,
        'one request reached the provider',
      );
    });
  }

  it('still retries a 503 the sandbox documents as "nothing done", and charges once', async () => {
    const eventId = uniqueEvent('gateway-503');
    await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'status-5xx', status: 503, times: 2 }]);
    const action = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, acmeCharge(eventId, 1_990), {
      wait: true,
      timeoutMs: 30_000,
    });
    assert.equal(action.status, 'confirmed');
    const counts = countForKey(await stack.providers.payments.ledger(), action.key);
    assert.deepEqual([counts.records, counts.requests, counts.replayed], [1, 3, 0], 'two refusals, then one commit');
  });
});
