import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecuteInput, ExecuteOutcome } from '../../activities';
import { createLoadActionPolicy } from '../../activities/load-action-policy';
import { exampleRegistry } from '../../examples/tools';

const tools = exampleRegistry();
import { resolveUpdate, statusQuery, type ActionInput, type ActionSnapshot } from '../../messages/action';
import { decisionKit, TEST_OPERATORS } from '../support/decisions';
import { useTimeSkippingEnv } from '../support/time-skipping';

/** An email whose reply was lost: the executor reports unknown, and there is nothing to look up. */
const intent = tools.parseIntent({
  operation: 'send-email',
  to: 'ops@example.com',
  subject: 'Renewal receipt',
  body: 'Thanks',
  template: 'renewal-receipt',
});

/** Decisions are signed at the test server's time, which is what the workflow's clock reads. */
let serverNowMs = 0;
const kit = decisionKit(() => serverNowMs);

describe('an unresolved action escalates after the escalation window (time-skipping)', () => {
  const harness = useTimeSkippingEnv();
  let sends = 0;

  function worker(taskQueue: string) {
    return harness.worker(taskQueue, {
      async executeAction(_input: ExecuteInput): Promise<ExecuteOutcome> {
        sends++;
        return { status: 'unknown', reason: 'reply lost; the provider has no key and no lookup', sends: 1 };
      },
      async lookupAction() {
        throw new Error('email has no lookup; the workflow must not ask');
      },
      async claimAction() {
        throw new Error('not used');
      },
      ...createLoadActionPolicy({ tools, trustedApprovalKeys: kit.trustedKeys, operatorScopes: TEST_OPERATORS }),
    });
  }

  it(
    'goes to needs_review, is escalated after 24 h, never resends, and takes an operator decision',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'escalation';
      const key = 'send-email:v1:acme:renewal-escalation';
      const input: ActionInput = {
        key,
        intent,
        requestHash: tools.hash(intent),
        tenant: 'acme',
        owner: 'run:acme:renewal-escalation',
      };
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const handle = await harness.env.client.workflow.start('actionWorkflowV3', {
          workflowId: key,
          taskQueue,
          args: [input],
        });
        // Let the reconciliation window pass; the run is now waiting for a human.
        await harness.env.sleep('1m');
        let snap = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(snap.status, 'needs_review');
        assert.ok(!snap.audit.some((a) => a.reason.startsWith('escalated')));

        await harness.env.sleep('25h');
        snap = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(snap.status, 'needs_review');
        assert.ok(
          snap.audit.some((a) => a.reason.startsWith('escalated')),
          'escalation recorded in the audit trail',
        );
        assert.equal(sends, 1, 'an ambiguous email is never resent, however long it waits');

        serverNowMs = await harness.env.currentTimeMs();
        const resolved = await handle.executeUpdate(resolveUpdate, {
          args: [
            kit.sign('resolve', key, {
              requestHash: input.requestHash,
              params: { outcome: 'failed', reason: 'customer confirmed nothing arrived; will resend manually' },
            }),
          ],
        });
        assert.equal(resolved.status, 'failed');
        const final = (await handle.result()) as ActionSnapshot;
        assert.equal(final.status, 'failed');
        assert.equal(final.audit.at(-1)?.by, 'alice');
      });
    },
  );
});
