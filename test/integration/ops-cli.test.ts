import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApprovalServer, type ApprovalServer } from '../../cli/approvals/approval-http';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { createApprovalSigner, loadOperatorsFile } from '../../cli/approvals/approval-signer';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { countWhere } from '../support/ledger';
import { runOpsProcess } from '../support/ops-process';
import type { ActionSnapshot } from '../../messages/action';

/**
 * The ops CLI as an operator runs it: a separate process that finds its server through the standard
 * Temporal environment. The action under review is real: the email provider commits a message, loses
 * the reply and delivers no webhook; with no key and no lookup only a person can say whether it went out.
 */
describe('ops CLI against a real Temporal server', () => {
  let stack: Stack;
  let dir: string;
  let operatorsFile: string;

  // The approval service's key; the worker trusts its public half and reads scopes from the operators file.
  const keys = generateApprovalKeyPair();
  let approvals: ApprovalServer | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ops-cli-'));
    operatorsFile = path.join(dir, 'operators.json');
    stack = await startStack({
      providerKinds: ['payments', 'email'],
      workerEnv: {
        RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [keys.keyId]: keys.publicKeyHex }),
        RETRYSAFE_OPERATORS_FILE: operatorsFile,
      },
    });
    await writeFile(operatorsFile, '{ "operators": [] }\n');
    await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await approvals?.close();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const ops = (args: string[], extraEnv: Record<string, string> = {}) =>
    runOpsProcess(stack, args, { RETRYSAFE_OPERATORS_FILE: operatorsFile, ...extraEnv });

  it('lists, shows and resolves an email whose reply was lost, with an authorized operator', async () => {
    const added = await ops(['operators', 'add', 'alice', '--tenant', 'acme', '--json']);
    assert.equal(added.code, 0, added.stderr);
    const { token } = JSON.parse(added.stdout) as { token: string };
    const other = await ops(['operators', 'add', 'gabe', '--tenant', 'globex', '--json']);
    assert.equal(other.code, 0, other.stderr);
    const { token: otherToken } = JSON.parse(other.stdout) as { token: string };
    // The approval service reads the same operators file `ops operators add` wrote.
    approvals = await startApprovalServer(
      createApprovalSigner({
        privateKeyHex: keys.privateKeyHex,
        keyId: keys.keyId,
        operators: await loadOperatorsFile(operatorsFile),
      }),
      { port: 0 },
    );
    const signing = { RETRYSAFE_APPROVAL_URL: approvals.url };

    const eventId = `ops-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const subject = `renewal receipt ${eventId}`;
    // The message.sent webhook would settle the action on its own; with it lost too, only a person can.
    await stack.providers.email.configure({ webhookUrl: null });
    await stack.providers.email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    const claimed = await stack.retrysafe.claimAction(
      { tenant: 'acme', eventId },
      { operation: 'send-email', to: 'a@example.com', subject, body: 'b', template: 'renewal-receipt' },
    );
    const key = claimed.key;
    let seen: ActionSnapshot | undefined;
    await waitFor(
      async () => (seen = await stack.retrysafe.getAction(key))?.status === 'needs_review',
      45_000,
      () => JSON.stringify({ seen, worker: stack.workers[0]?.output().slice(-3000) }, null, 2),
    );
    await waitFor(async () =>
      (await stack.retrysafe.listActions({ status: 'needs_review' })).some((a) => a.key === key),
    );

    const queue = await ops(['queue', '--json']);
    assert.equal(queue.code, 0, queue.stderr);
    const row = (
      JSON.parse(queue.stdout) as Array<{ key: string; status: string; operation: string; tenant: string }>
    ).find((a) => a.key === key);
    assert.deepEqual(row && [row.status, row.operation, row.tenant], ['needs_review', 'send-email', 'acme']);

    const shown = await ops(['show', key, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const snapshot = JSON.parse(shown.stdout) as ActionSnapshot;
    assert.equal(snapshot.status, 'needs_review');
    assert.deepEqual(
      snapshot.audit.map((e) => e.to),
      ['planned', 'dispatching', 'unknown', 'needs_review'],
    );

    const refused = await ops([
      'resolve',
      key,
      '--decision',
      'confirmed',
      '--provider-ref',
      'msg_1',
      '--reason',
      'seen in provider dashboard',
    ]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /operator token is required/);
    assert.equal((await stack.retrysafe.getAction(key))?.status, 'needs_review', 'nothing reached the action');

    // No approval service where the CLI looks: it says where it looked, and nothing reaches the action.
    const unsignable = await ops(
      ['resolve', key, '--decision', 'confirmed', '--provider-ref', 'msg_1', '--reason', 'seen in provider dashboard'],
      { RETRYSAFE_OPERATOR_TOKEN: token, RETRYSAFE_APPROVAL_URL: 'http://127.0.0.1:9' },
    );
    assert.equal(unsignable.code, 1, unsignable.stderr);
    assert.match(unsignable.stderr, /cannot reach the approval service at http:\/\/127\.0\.0\.1:9/);
    assert.equal((await stack.retrysafe.getAction(key))?.status, 'needs_review', 'nothing reached the action');

    // An operator of another tenant: the approval service will not sign, and the action hears nothing.
    const crossTenant = await ops(
      ['resolve', key, '--decision', 'not-happened', '--reason', 'let me resend it for you'],
      { RETRYSAFE_OPERATOR_TOKEN: otherToken, ...signing },
    );
    assert.equal(crossTenant.code, 1, crossTenant.stderr);
    assert.match(crossTenant.stderr, /not an operator of tenant acme/);
    const untouched = await stack.retrysafe.getAction(key);
    assert.equal(untouched?.status, 'needs_review');
    assert.equal(untouched?.audit.length, snapshot.audit.length, 'nothing reached the action');

    const resolved = await ops(
      ['resolve', key, '--decision', 'confirmed', '--provider-ref', 'msg_1', '--reason', 'seen in provider dashboard'],
      { RETRYSAFE_OPERATOR_TOKEN: token, ...signing },
    );
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.match(resolved.stdout, /needs_review → confirmed/);

    const action = await stack.retrysafe.getAction(key);
    assert.equal(action?.status, 'confirmed');
    assert.equal(action?.providerRef, 'msg_1');
    const last = action!.audit.at(-1)!;
    assert.deepEqual([last.from, last.to, last.by], ['needs_review', 'confirmed', 'alice']);
    assert.match(last.reason, /seen in provider dashboard/);

    const human = await ops(['show', key]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /needs_review → confirmed +operator: seen in provider dashboard +alice/);

    const sent = countWhere(await stack.providers.email.ledger(), 'messages', (m) => m.subject === subject);
    assert.equal(sent, 1, 'exactly one email at the provider: the operator confirmed it, nothing resent it');
  });

  it('exits 1 for an unknown key and 2 for a malformed one', async () => {
    const missing = await ops(['show', 'send-email:v1:acme:no-such-event']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no action with key send-email:v1:acme:no-such-event/);
    const malformed = await ops(['show', 'send-email/acme']);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /KEY: /);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000, describe?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${describe ? `\n${describe()}` : ''}`);
}
