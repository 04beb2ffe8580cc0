import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestHash } from '../../policies/request-hash';
import { parseIntent } from '../../policies/intents';
import type { DispatchInput, DispatchOutcome } from '../../activities';
import { resolveUpdate, statusQuery, type EffectInput, type EffectSnapshot } from '../../workflows/effect-api';
import { useTimeSkippingEnv } from '../support/time-skipping';

/** An email whose reply was lost: the executor reports unknown, and there is nothing to look up. */
const intent = parseIntent({
  operation: 'send-email',
  to: 'ops@example.com',
  subject: 'Renewal receipt',
  body: 'Thanks',
  template: 'renewal-receipt',
});

describe('an unresolved action escalates after the escalation window (time-skipping)', () => {
  const harness = useTimeSkippingEnv();
  let sends = 0;

  function worker(taskQueue: string) {
    return harness.worker(taskQueue, {
      async dispatchEffect(_input: DispatchInput): Promise<DispatchOutcome> {
        sends++;
        return { status: 'unknown', reason: 'reply lost; the provider has no key and no lookup', sends: 1 };
      },
      async lookupEffect() {
        throw new Error('email has no lookup; the workflow must not ask');
      },
      async claimAction() {
        throw new Error('not used');
      },
      async loadActionPolicy() {
        return { trustedApprovalKeys: {} };
      },
    });
  }

  it(
    'goes to needs_review, is escalated after 24 h, never resends, and takes an operator decision',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'escalation';
      const key = 'send-email:v1:acme:renewal-escalation';
      const input: EffectInput = {
        key,
        intent,
        requestHash: requestHash(intent),
        tenant: 'acme',
        owner: 'run:acme:renewal-escalation',
      };
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const handle = await harness.env.client.workflow.start('effectWorkflow', {
          workflowId: key,
          taskQueue,
          args: [input],
        });
        // Let the reconciliation window pass; the run is now waiting for a human.
        await harness.env.sleep('1m');
        let snap = (await handle.query(statusQuery)) as EffectSnapshot;
        assert.equal(snap.status, 'needs_review');
        assert.ok(!snap.audit.some((a) => a.reason.startsWith('escalated')));

        await harness.env.sleep('25h');
        snap = (await handle.query(statusQuery)) as EffectSnapshot;
        assert.equal(snap.status, 'needs_review');
        assert.ok(
          snap.audit.some((a) => a.reason.startsWith('escalated')),
          'escalation recorded in the audit trail',
        );
        assert.equal(sends, 1, 'an ambiguous email is never resent, however long it waits');

        const resolved = await handle.executeUpdate(resolveUpdate, {
          args: [
            {
              decision: 'failed',
              operator: 'alice',
              reason: 'customer confirmed nothing arrived; will resend manually',
            },
          ],
        });
        assert.equal(resolved.status, 'failed');
        const final = (await handle.result()) as EffectSnapshot;
        assert.equal(final.status, 'failed');
        assert.equal(final.audit.at(-1)?.by, 'alice');
      });
    },
  );
});
