/**
 * Records workflow histories of the demo scenarios into test/replay/histories/, for the replay suite
 * (`npm run test:replay`) that runs on every test run. The recordings of a release carry its version as their
 * second name (default `v0-3-0`); after an intended, patched() change within the release, record the new path
 * beside them (which must keep replaying) under a suffix naming the patch:
 *   npm run record-histories -- --suffix my-patch      (writes renewal-renewed.my-patch.json, …)
 * Each history is the JSON form the Temporal CLI and Web UI export, so any of them can be replayed too.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyAsJson, historyIfAny } from './lib/history-json';
import { startStack, type Stack } from './lib/stack';
import { renewalChargeIntent } from '../examples/workflows/renewal';
import { DEMO_RENEWAL } from './demo/renewal-crash';
import type { AgentRunInput } from 'retrysafe/workflow';
import { createApprover, type Approver } from './chaos/approvals';

const OUT = path.resolve(__dirname, '..', 'test', 'replay', 'histories');

/** `--suffix NAME`: the recordings' second name, so a new path's histories sit beside the old ones. */
function suffixArg(argv: string[]): string {
  const i = argv.indexOf('--suffix');
  if (i < 0) return '.v0-3-0';
  const value = argv[i + 1];
  if (!value || !/^[a-z0-9-]+$/.test(value)) {
    throw new Error(`--suffix needs a name of lowercase letters, digits and dashes (got ${JSON.stringify(value)})`);
  }
  return `.${value}`;
}
const SUFFIX = suffixArg(process.argv.slice(2));

async function save(client: Client, name: string, workflowId: string): Promise<void> {
  const history = await historyIfAny(client, workflowId);
  if (!history) throw new Error(`no workflow ${workflowId} to record`);
  const file = path.join(OUT, `${name}${SUFFIX}.json`);
  const json = historyAsJson(history);
  // The workflow ID travels with the history: workflows check their own ID (run:<tenant>:<event>) on replay too.
  await writeFile(file, `${JSON.stringify({ workflowId, history: json })}\n`);
  process.stdout.write(`recorded ${name}${SUFFIX} (${history.events?.length ?? 0} events)\n`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  // Plain payloads whatever the shell says: the replay test reads these histories without keys.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-record-'));
  const stack = await startStack({ payloadEncryption: false, ledger: `sqlite:${path.join(dir, 'ledger.sqlite')}` });
  // A trusted approver, so an action that waits for a person's confirmation can be recorded through to its charge.
  const approver = createApprover('recorder-approver');
  try {
    await stack.startWorker({ name: 'recorder', env: approver.workerEnv });
    const { retrysafe, client } = stack;

    const happy = { ...DEMO_RENEWAL, eventId: 'replay-renewal-01', orderId: 'R-1001' };
    const run = await retrysafe.startRenewal(happy);
    await run.result();
    // Its actions settled on their ledger rows, in the run's own activities: no action workflow to record.
    await save(client, 'renewal-renewed', run.workflowId);

    await stack.providers.shipping.setFaults([{ op: 'shipments.create', kind: 'permanent-failure' }]);
    const failing = { ...DEMO_RENEWAL, eventId: 'replay-renewal-02', orderId: 'R-1002' };
    const comp = await retrysafe.startRenewal(failing);
    await comp.result();
    await stack.providers.shipping.clearFaults();
    await save(client, 'renewal-compensated', comp.workflowId);
    // The saga's undo is claimed for its action workflow (a failed undo waits for a person there).
    await save(client, 'refund-action-undo', 'refund:v1:acme:replay-renewal-02');

    const agent: AgentRunInput = {
      tenant: 'acme',
      eventId: 'replay-agent-01',
      goal: 'Renew the subscription: reserve the plan, charge the customer, ship the welcome kit.',
      facts: {
        order: {
          id: 'R-2001',
          amountCents: 4990,
          currency: 'usd',
          customerId: 'cus_acme',
          paymentMethod: 'pm_7',
          sku: 'plan-annual',
          quantity: 1,
          address: DEMO_RENEWAL.shipTo,
        },
      },
    };
    const agentRun = await retrysafe.startAgentRun(agent);
    await agentRun.result();
    await save(client, 'agent-run-done', agentRun.workflowId);
    await recordHandovers(stack);
    await recordApproval(stack, approver);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The action workflows that run beside a run's act: one that waited while the act held the row (a second claimant)
 * and adopted its outcome, and one that took the row over from an act whose outcome was unknown, reconciled by
 * lookup, and went to review.
 */
async function recordHandovers(stack: Stack): Promise<void> {
  const { client, retrysafe } = stack;
  const charge = { ...DEMO_RENEWAL, eventId: 'replay-renewal-03', orderId: 'R-1003' };
  await stack.providers.payments.setFaults([{ op: 'charges.create', kind: 'delay', delayMs: 2_000, times: 1 }]);
  const run = await retrysafe.startRenewal(charge);
  const chargeKey = 'charge:v1:acme:replay-renewal-03';
  while ((await stack.ledger.get(chargeKey))?.status !== 'dispatching') await sleep(25);
  const intent = renewalChargeIntent(charge);
  await retrysafe.claimAction({ tenant: 'acme', eventId: charge.eventId }, intent, { wait: true, timeoutMs: 30_000 });
  await run.result();
  await save(client, 'charge-action-waited', chargeKey);

  const unknown = { ...DEMO_RENEWAL, eventId: 'replay-renewal-04', orderId: 'R-1004' };
  await stack.providers.email.setFaults([
    { op: 'messages.create', kind: 'status-after-commit', status: 502, times: 1 },
  ]);
  const second = await retrysafe.startRenewal(unknown);
  const receiptKey = 'send-email:v1:acme:replay-renewal-04:receipt';
  for (let i = 0; (await retrysafe.getAction(receiptKey))?.status !== 'needs_review'; i++) {
    if (i > 1200) throw new Error(`${receiptKey} never reached needs_review`);
    await sleep(50);
  }
  await save(client, 'receipt-action-taken-over', receiptKey);
  await second.terminate('recorded');
}

/** An action workflow that waited for a signed confirmation, was approved and charged. */
async function recordApproval(stack: Stack, approver: Approver): Promise<void> {
  const { client, retrysafe } = stack;
  const eventId = 'replay-approval-01';
  const intent = renewalChargeIntent({ ...DEMO_RENEWAL, orderId: 'R-1005', amountCents: 7_500 });
  const claimed = await retrysafe.claimAction({ tenant: 'acme', eventId }, intent);
  for (let i = 0; (await retrysafe.getAction(claimed.key))?.status !== 'awaiting_confirmation'; i++) {
    if (i > 600) throw new Error(`${claimed.key} never waited for a confirmation`);
    await sleep(50);
  }
  await approver.approve(client, claimed.key, claimed.requestHash);
  const done = await retrysafe.claimAction({ tenant: 'acme', eventId }, intent, { wait: true, timeoutMs: 30_000 });
  if (done.status !== 'confirmed') throw new Error(`${claimed.key} ended ${done.status}, not confirmed`);
  await save(client, 'charge-action-approved', claimed.key);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
