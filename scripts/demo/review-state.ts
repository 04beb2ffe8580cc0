/**
 * `npm run demo -- <state>`: puts one action in front of a person on the stack `npm start` runs, and
 * prints how to decide it. Each state is the real path an action takes there, not a faked status:
 *
 *   awaiting-confirmation   a 75.00 USD charge: above the confirmation threshold, it waits for a signed approval
 *   needs-review            a 1 500.00 USD charge: above the human-only limit, the agent never sends it
 *   unknown                 an email whose reply the provider drops after sending it: once approved, its
 *                           outcome is unknown, and with no lookup to ask it goes to needs_review
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ExampleClient } from '../../examples/client';
import { exampleRegistry, type ChargeIntent, type SendEmailIntent } from '../../examples/tools';
import { DEMO_DB_FILE } from '../lib/demo-data';
import { withStackSettings } from '../../cli/dev/stack-file';
import { readRunningStack, type RunningStack } from './running-stack';
import { APPROVAL_URL_ENV, DEFAULT_APPROVAL_URL } from '../../cli/ops/signatures';
import type { ActionSnapshot } from 'retrysafe';
import { dataConverterFromEnv } from 'retrysafe/worker';

export const REVIEW_STATES = ['awaiting-confirmation', 'needs-review', 'unknown'] as const;
type ReviewState = (typeof REVIEW_STATES)[number];
const TENANT = 'acme';

class UsageError extends Error {}

function charge(amountCents: number, reference: string): ChargeIntent {
  return {
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: reference,
  };
}

function email(eventId: string): SendEmailIntent {
  return {
    operation: 'send-email',
    to: 'customer@example.com',
    subject: `Your order ${eventId} has shipped`,
    body: 'It is on its way.',
  };
}

async function waitFor(rs: ExampleClient, key: string, status: string, timeoutMs = 30_000): Promise<ActionSnapshot> {
  const deadline = Date.now() + timeoutMs;
  let last: ActionSnapshot | undefined;
  while (Date.now() < deadline) {
    last = await rs.getAction(key).catch(() => undefined);
    if (last?.status === status) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `action ${key} did not reach ${status} within ${timeoutMs / 1000}s (it is ${last?.status ?? 'not found'})`,
  );
}

async function armLostReply(stack: RunningStack): Promise<void> {
  const url = stack.providers.email;
  if (!url) throw new Error('the running stack has no email provider');
  const res = await fetch(new URL('/admin/faults', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ faults: [{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }] }),
  });
  if (!res.ok) throw new Error(`the email provider refused the fault: ${res.status} ${await res.text()}`);
}

export async function createReviewState(
  state: ReviewState,
  stack: RunningStack,
  dataDir: string,
  say: (line: string) => void,
): Promise<ActionSnapshot> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const stackEnv = (await withStackSettings({ ...process.env, RETRYSAFE_DIR: dataDir })).env;
    const dataConverter = dataConverterFromEnv(stackEnv);
    // The client reads each action's record from the ledger the stack's workers keep.
    process.env.RETRYSAFE_LEDGER ??= stackEnv.RETRYSAFE_LEDGER;
    const client = new Client({ connection, namespace: stack.namespace, ...(dataConverter ? { dataConverter } : {}) });
    const rs = new ExampleClient(client, { taskQueue: stack.taskQueue, tools: exampleRegistry() });
    // To the millisecond, plus a random tail: two demos in the same second are two actions.
    const stamp = new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 17);
    const eventId = `${state}-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
    const env = stack.approvalsUrl === DEFAULT_APPROVAL_URL ? '' : `${APPROVAL_URL_ENV}=${stack.approvalsUrl} `;
    const ops = (args: string) => `${env}npm run ops -- ${args}`;
    switch (state) {
      case 'awaiting-confirmation': {
        const claimed = await rs.claimAction({ tenant: TENANT, eventId }, charge(7_500, `ord-${eventId}`));
        const action = await waitFor(rs, claimed.key, 'awaiting_confirmation');
        say(`${action.key} is awaiting_confirmation: ${action.dryRun?.policy.reasons.join('; ') ?? action.summary}`);
        say(`  look:     ${ops(`show ${action.key}`)}`);
        say(`  approve:  ${ops(`approve ${action.key} --reason "customer confirmed"`)}   (one charge)`);
        say(`  reject:   ${ops(`reject ${action.key} --reason "not ordered"`)}   (nothing is sent)`);
        say(`  or sign in at ${stack.approvalsUrl} with the token in .data/demo-operator.token`);
        return action;
      }
      case 'needs-review': {
        const claimed = await rs.claimAction({ tenant: TENANT, eventId }, charge(150_000, `ord-${eventId}`));
        const action = await waitFor(rs, claimed.key, 'needs_review');
        say(`${action.key} is needs_review: the agent never sends it; a person does it, or decides it must not happen`);
        say(`  look:      ${ops(`show ${action.key}`)}`);
        say(`  not done:  ${ops(`resolve ${action.key} --decision failed --reason "declined by finance"`)}`);
        say(
          `  done by hand: ${ops(`resolve ${action.key} --decision confirmed --provider-ref REF --reason "charged in the dashboard"`)}`,
        );
        return action;
      }
      case 'unknown': {
        await armLostReply(stack);
        const claimed = await rs.claimAction({ tenant: TENANT, eventId }, email(eventId));
        const action = await waitFor(rs, claimed.key, 'awaiting_confirmation');
        say(`${action.key} is awaiting_confirmation; the email provider will drop its reply after sending it.`);
        say(`  1. approve it:  ${ops(`approve ${action.key} --reason "send it"`)}`);
        say('     the provider sends the email but the reply is lost: the action goes unknown, and since');
        say('     email has no lookup, it waits briefly for evidence, then goes to needs_review. It never resends.');
        say(
          `  2. look:        ${ops(`show ${action.key}`)}   (the provider's message.sent event is shown as evidence)`,
        );
        say(
          `  3. resolve:     ${ops(`resolve ${action.key} --decision confirmed --provider-ref MSG_ID --reason "in the provider's log"`)}`,
        );
        return action;
      }
    }
  } finally {
    await connection.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'db-file': { type: 'string', default: DEMO_DB_FILE }, help: { type: 'boolean', short: 'h' } },
  });
  const usage = `usage: npm run demo -- ${REVIEW_STATES.join('|')}   (with npm start running)`;
  if (values.help) return void process.stdout.write(`${usage}\n`);
  const [state, ...rest] = positionals;
  if (!(REVIEW_STATES as readonly string[]).includes(state ?? '') || rest.length > 0) {
    throw new UsageError(
      `${state === undefined ? 'a state is required' : `unknown state ${JSON.stringify(state)}`}\n${usage}`,
    );
  }
  const dataDir = path.dirname(path.resolve(values['db-file']));
  const stack = await readRunningStack(dataDir);
  if (!stack)
    throw new UsageError(`no running stack found in ${dataDir}: start one with \`npm start\` in another shell`);
  await createReviewState(state as ReviewState, stack, dataDir, (line) => void process.stdout.write(`${line}\n`));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`npm run demo: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1);
  });
}
