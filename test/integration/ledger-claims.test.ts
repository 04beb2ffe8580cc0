import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import { errorCodeOf } from '../../policies/errors';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { decisionKit } from '../support/decisions';
import { runOpsProcess } from '../support/ops-process';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { acmeCharge } from '../support/intents';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';
import { deleteWorkflow as deleteWorkflowOf } from '../support/delete-workflow';

/**
 * A key protects only while its workflow is retained; the durable ledger protects it after. Each case
 * deletes the action's workflow (`temporal workflow delete`, as retention would remove it) and claims
 * again, against both ledger back ends. Charges are counted at the payments provider.
 */
const kit = decisionKit();

const charge = acmeCharge;

const BACKENDS = ['sqlite', 'postgres'] as const;

for (const backend of BACKENDS) {
  describe(`claims consult the ledger once an action's workflow is gone (${backend})`, () => {
    let stack: Stack;
    let dir: string;
    let postgres: PostgresServer | undefined;
    let ledgerUrl: string;

    const atProvider = async (key: string) => {
      const ledger = await stack.providers.payments.ledger();
      return {
        charges: (ledger.records.charges ?? []).filter((c) => (c as { idempotencyKey?: string }).idempotencyKey === key)
          .length,
        requests: ledger.requests.filter((r) => r.idempotencyKey === key).length,
      };
    };

    const deleteWorkflow = (key: string) => deleteWorkflowOf(stack.client, stack.server.namespace, key);

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), `retrysafe-ledger-${backend}-`));
      if (backend === 'postgres') {
        postgres = await startPostgres();
        ledgerUrl = postgres.url;
      } else {
        ledgerUrl = `sqlite:${path.join(dir, 'ledger.sqlite')}`;
      }
      stack = await startStack({ providerKinds: ['payments'], ledger: ledgerUrl });
      await stack.startWorker({ env: kit.workerEnv });
    });
    after(async () => {
      await stack?.stop();
      await postgres?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('answers the same request with the recorded outcome, sends nothing, and refuses another request', async () => {
      const eventId = uniqueEvent(`ledger-settled-${backend}`);
      const first = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge(eventId, 1_990), {
        wait: true,
        timeoutMs: 30_000,
      });
      assert.equal(first.status, 'confirmed', JSON.stringify(first.audit));
      assert.deepEqual(await atProvider(first.key), { charges: 1, requests: 1 });
      const row = await stack.ledger!.get(first.key);
      assert.equal(row?.status, 'confirmed');
      assert.equal(row?.providerRef, first.providerRef);
      assert.deepEqual(
        (await stack.ledger!.audit(first.key)).map((e) => e.status),
        ['planned', 'dispatching', 'confirmed'],
      );

      await deleteWorkflow(first.key);
      const again = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge(eventId, 1_990));
      assert.equal(again.source, 'ledger', 'answered from the ledger');
      assert.equal(again.status, 'confirmed');
      assert.equal(again.providerRef, first.providerRef);
      assert.deepEqual(await atProvider(first.key), { charges: 1, requests: 1 }, 'nothing was sent again');
      await assert.rejects(stack.client.workflow.getHandle(first.key).describe(), WorkflowNotFoundError);

      await assert.rejects(
        stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge(eventId, 4_990)),
        (err: unknown) => errorCodeOf(err) === 'IntentMismatch' && /ledger/.test((err as Error).message),
      );
      assert.deepEqual(await atProvider(first.key), { charges: 1, requests: 1 });

      // The operator's view after the workflow is gone: ops show falls back to the ledger, ops history lists it.
      const env = { RETRYSAFE_LEDGER: ledgerUrl };
      const shown = await runOpsProcess(stack, ['show', first.key, '--json'], env);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal((JSON.parse(shown.stdout) as { source?: string; status: string }).source, 'ledger');
      const history = await runOpsProcess(
        stack,
        ['history', '--tenant', 'acme', '--operation', 'charge', '--since', '1h', '--json'],
        env,
      );
      assert.equal(history.code, 0, history.stderr);
      const lines = history.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; status: string });
      assert.ok(
        lines.some((l) => l.key === first.key && l.status === 'confirmed'),
        history.stdout,
      );
    });

    it('sends an action the ledger holds unresolved to needs_review, never to a fresh send', async () => {
      const eventId = uniqueEvent(`ledger-open-${backend}`);
      // At or above the confirmation threshold: it waits for a person, recorded as such in the ledger.
      const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge(eventId, 7_500));
      await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
      assert.equal((await stack.ledger!.get(claimed.key))?.status, 'awaiting_confirmation');

      await deleteWorkflow(claimed.key);
      const again = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, charge(eventId, 7_500));
      assert.notEqual(again.source, 'ledger', 'a new workflow holds it again');
      const review = await waitForStatus(stack.retrysafe, claimed.key, 'needs_review', { timeoutMs: 30_000 });
      assert.match(review.audit.at(-1)!.reason, /recovered from the ledger: .* awaiting_confirmation/);
      assert.equal(review.sends, 0);
      assert.deepEqual(await atProvider(claimed.key), { charges: 0, requests: 0 });
      await waitUntil('the ledger to follow the new workflow into needs_review', async () => {
        return (await stack.ledger!.get(claimed.key))?.status === 'needs_review';
      });

      // A person decides; the ledger follows the new workflow.
      const resolved = await stack.retrysafe.resolveAction(
        kit.sign('resolve', claimed.key, {
          requestHash: review.requestHash,
          params: { outcome: 'failed', reason: 'the customer withdrew the order' },
        }),
      );
      assert.equal(resolved.status, 'failed');
      await waitUntil('the ledger to record the failure', async () => {
        return (await stack.ledger!.get(claimed.key))?.status === 'failed';
      });
      assert.deepEqual(await atProvider(claimed.key), { charges: 0, requests: 0 });
    });
  });
}
