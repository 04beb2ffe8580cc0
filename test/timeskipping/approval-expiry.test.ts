import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecuteInput, ExecuteOutcome } from '../../activities';
import { createLoadActionPolicy } from '../../activities/load-action-policy';
import { exampleRegistry } from '../../examples/tools';
import { DEFAULT_APPROVAL_TTL_MS } from '../../policies/signed-decision';
import { errorCodeOf, RetrysafeError } from '../../policies/errors';
import { CONFIRMATION_WINDOW } from '../../policies/timeouts';
const tools = exampleRegistry();
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { createApprovalSigner, hashOperatorToken, submitApproval } from '../../cli/approvals/approval-signer';
import { dryRunQuery } from '../../messages/approval';
import { statusQuery, type ActionInput, type ActionSnapshot } from '../../messages/action';
import { acmeChargeAction } from '../support/intents';
import { useTimeSkippingEnv } from '../support/time-skipping';

/**
 * The confirmation window and approval expiry, on the time-skipping server: a day without a decision
 * fails the action with nothing sent, and an approval that expired on its way is refused. Time is the
 * test server's, which is also what the workflow's Date.now() (and so the approval validator) sees.
 */

const KEYS = generateApprovalKeyPair();
const OPERATOR_TOKEN = 'approval-expiry-operator-token';
const OPERATOR = {
  name: 'carol',
  tokenSha256: hashOperatorToken(OPERATOR_TOKEN),
  tenants: ['acme'],
  roles: ['approver' as const],
};

const effectInput = (eventId: string): ActionInput => acmeChargeAction(eventId, 7500);

describe('approval expiry and the confirmation window (time-skipping)', () => {
  const harness = useTimeSkippingEnv();
  /** The test server's clock as last read; the signer signs with it. */
  let serverNowMs = 0;
  const dispatched: string[] = [];
  const signer = createApprovalSigner({
    privateKeyHex: KEYS.privateKeyHex,
    keyId: KEYS.keyId,
    operators: [OPERATOR],
    clock: () => serverNowMs,
  });

  function worker(taskQueue: string) {
    return harness.worker(taskQueue, {
      ...createLoadActionPolicy({
        tools,
        trustedApprovalKeys: { [KEYS.keyId]: KEYS.publicKeyHex },
        operatorScopes: { carol: { tenants: ['acme'], roles: ['approver'] } },
      }),
      async executeAction(input: ExecuteInput): Promise<ExecuteOutcome> {
        dispatched.push(input.key);
        return { status: 'confirmed', providerRef: `ch_${dispatched.length}`, record: {}, via: 'send', sends: 1 };
      },
      async lookupAction() {
        throw new Error('a confirmed dispatch needs no lookup');
      },
    });
  }

  const dispatchesOf = (key: string) => dispatched.filter((k) => k === key).length;

  it(
    'fails a 7500-cent charge with DecisionRejected after the confirmation window and never dispatches it',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'approval-window';
      const input = effectInput('approval-window');
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const handle = await harness.env.client.workflow.start('actionWorkflowV3', {
          workflowId: input.key,
          taskQueue,
          args: [input],
        });
        await harness.env.sleep('1m');
        const waiting = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(waiting.status, 'awaiting_confirmation');
        assert.equal(waiting.decisionMode, 'confirm');

        assert.equal(CONFIRMATION_WINDOW, '24h', 'this test skips past a 24 h window');
        await harness.env.sleep('25h');
        const final = (await handle.result()) as ActionSnapshot;
        assert.equal(final.status, 'failed', JSON.stringify(final.audit));
        assert.equal(final.error?.code, 'DecisionRejected');
        assert.match(final.error?.message ?? '', /confirmation window/);
        assert.deepEqual(
          final.audit.map((a) => a.to),
          ['planned', 'awaiting_confirmation', 'failed'],
        );
        assert.equal(final.sends, 0);
        assert.equal(dispatchesOf(input.key), 0, 'executeAction was never called');
      });
    },
  );

  it(
    'refuses an approval whose expiresAt passed before it was submitted, then dispatches once on a fresh one',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'approval-expiry';
      const input = effectInput('approval-expiry');
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const handle = await harness.env.client.workflow.start('actionWorkflowV3', {
          workflowId: input.key,
          taskQueue,
          args: [input],
        });
        await harness.env.sleep('1m');
        const dryRun = await handle.query(dryRunQuery);
        assert.equal(dryRun?.requestHash, input.requestHash);
        const operator = signer.authenticate(OPERATOR_TOKEN)!;

        serverNowMs = await harness.env.currentTimeMs();
        const stale = signer.sign(operator, { key: input.key, requestHash: input.requestHash, decision: 'approve' });
        assert.equal(Date.parse(stale.claims.expiresAt) - Date.parse(stale.claims.issuedAt), DEFAULT_APPROVAL_TTL_MS);
        // The approval sits in someone's outbox past its expiry (10 min by default).
        await harness.env.sleep(DEFAULT_APPROVAL_TTL_MS + 60_000);
        assert.ok(
          (await harness.env.currentTimeMs()) > Date.parse(stale.claims.expiresAt),
          'server time is past expiresAt',
        );

        const refused = await submitApproval(harness.env.client, stale).then(
          () => assert.fail('an expired approval must be refused'),
          (err: unknown) => err,
        );
        // The validator's typed error, with its reason and its words.
        assert.ok(refused instanceof RetrysafeError, String(refused));
        assert.equal(errorCodeOf(refused), 'DecisionRejected');
        assert.equal(refused.reason, 'expired', JSON.stringify(refused.details));
        assert.match(refused.message, /expired at/);
        let snap = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(snap.status, 'awaiting_confirmation', 'the refused approval changed nothing');
        assert.equal(dispatchesOf(input.key), 0);

        // The same operator reviews again and signs a fresh approval: it is taken and the charge goes out once.
        serverNowMs = await harness.env.currentTimeMs();
        const fresh = signer.sign(operator, { key: input.key, requestHash: input.requestHash, decision: 'approve' });
        const outcome = await submitApproval(harness.env.client, fresh);
        assert.equal(outcome.approver, 'carol');
        assert.equal(outcome.decision, 'approve');
        await harness.env.sleep('1m');
        snap = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(snap.status, 'confirmed', JSON.stringify(snap.audit));
        assert.equal(snap.approvedBy, 'carol');
        assert.equal(dispatchesOf(input.key), 1, 'dispatched exactly once');
      });
    },
  );
});
