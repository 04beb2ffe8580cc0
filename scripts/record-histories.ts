/**
 * Records workflow histories of the demo scenarios into test/replay/histories/, for the replay suite
 * (`npm run test:replay`) that runs on every test run. After an intended, patched() change, record the new
 * path beside the old recordings (which must keep replaying) under a suffix naming the patch:
 *   npm run record-histories -- --suffix owner-sends      (writes renewal-renewed.owner-sends.json, …)
 * Each history is the JSON form the Temporal CLI and Web UI export, so any of them can be replayed too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyAsJson } from './lib/history-json';
import { startStack } from './lib/stack';
import { DEMO_RENEWAL } from './demo/renewal-crash';
import type { AgentRunInput } from 'retrysafe/workflow';

const OUT = path.resolve(__dirname, '..', 'test', 'replay', 'histories');

/** `--suffix NAME`: the recordings' second name, so a new path's histories sit beside the old ones. */
function suffixArg(argv: string[]): string {
  const i = argv.indexOf('--suffix');
  if (i < 0) return '';
  const value = argv[i + 1];
  if (!value || !/^[a-z0-9-]+$/.test(value)) {
    throw new Error(`--suffix needs a name of lowercase letters, digits and dashes (got ${JSON.stringify(value)})`);
  }
  return `.${value}`;
}
const SUFFIX = suffixArg(process.argv.slice(2));

async function save(client: Client, name: string, workflowId: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const file = path.join(OUT, `${name}${SUFFIX}.json`);
  const json = historyAsJson(history);
  // The workflow ID travels with the history: workflows check their own ID (run:<tenant>:<event>) on replay too.
  await writeFile(file, `${JSON.stringify({ workflowId, history: json })}\n`);
  process.stdout.write(`recorded ${name}${SUFFIX} (${history.events?.length ?? 0} events)\n`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  // Plain payloads whatever the shell says: the replay test reads these histories without keys.
  const stack = await startStack({ payloadEncryption: false });
  try {
    await stack.startWorker({ name: 'recorder' });
    const { retrysafe, client } = stack;

    const happy = { ...DEMO_RENEWAL, eventId: 'replay-renewal-01', orderId: 'R-1001' };
    const run = await retrysafe.startRenewal(happy);
    await run.result();
    await save(client, 'renewal-renewed', run.workflowId);
    await save(client, 'charge-action-confirmed', 'charge:v1:acme:replay-renewal-01');

    await stack.providers.shipping.setFaults([{ op: 'shipments.create', kind: 'permanent-failure' }]);
    const failing = { ...DEMO_RENEWAL, eventId: 'replay-renewal-02', orderId: 'R-1002' };
    const comp = await retrysafe.startRenewal(failing);
    await comp.result();
    await stack.providers.shipping.clearFaults();
    await save(client, 'renewal-compensated', comp.workflowId);
    await save(client, 'charge-action-compensated', 'charge:v1:acme:replay-renewal-02');

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
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
