import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createActOnRecordActivity } from '../../../activities/act-on-record';
import { settleBeforeSend } from '../../../activities/before-send';
import { createExecuteAction } from '../../../activities/execute-action';
import { createRecordLedger, type RecordLedgerInput } from '../../../activities/record-ledger';
import { isFinal, type ActionStatus } from '../../../policies/action-status';
import { noRetrysafeMetrics } from '../../../metrics/instruments';
import { defineTool } from '../../../policies/tool';
import { ambiguous, committed } from '../../../policies/tool-outcome';
import { createToolRegistry } from '../../../policies/tool-registry';
import type { Actor, World } from './world';

/**
 * The protocol's actors, each the engine's own code where it can run outside Temporal, over the ledger as the actor
 * reaches it (every call a scheduled step that may be its last):
 *   act        a run's act: activities/act-on-record.ts itself, one attempt in the SDK's mock activity context
 *              (a later attempt is what Temporal starts once it gave up on an earlier one that may still be
 *              running: paused, its worker frozen); its handover to the action workflow has no client and ends it
 *   workflow   the action workflow's record (workflows/action/ledger-claim.ts, dispatch, reconciliation):
 *              claimLedgerRow and recordLedger from activities/record-ledger.ts and the executor's
 *              settleBeforeSend, in the order the workflow calls them; a replay after a crash is the same run
 *   sweeper    workers/row-sweeper.ts's takeover of a `planned` row a run's act left behind, failed as unsent
 */

/** Thousands of acts hand over and die: their log lines would drown the test's output. */
const QUIET = new DefaultLogger('ERROR');

const TOOL = 'notify';
const OWNER = 'run:acme:model';

/** The key-less tool an actor sends with: its provider is the world's, reached through the actor. */
function keylessTool(actor: Actor) {
  const tool = defineTool({
    name: TOOL,
    version: 1,
    description: 'A message with no idempotency key and no lookup.',
    input: z.strictObject({ n: z.number() }),
    kind: 'mutation',
    dedupe: 'none',
    readAfterWriteLagMs: 0,
    riskClass: 'routine-message',
    summarize: (i) => `${TOOL} ${i.n}`,
    async execute() {
      const sent = await actor.send();
      return sent.replyLost ? ambiguous('the reply was lost after the provider committed') : committed(sent.ref);
    },
  });
  const tools = createToolRegistry([tool]);
  const intent = tools.parseIntent({ operation: TOOL, n: 1 });
  return { tools, intent, requestHash: tools.hash(intent) };
}

export function runAct(
  world: World,
  actor: Actor,
  execution: { generation: number; attempt: number },
): Promise<unknown> {
  const { tools, intent, requestHash } = keylessTool(actor);
  const ledger = actor.ledger;
  // A handover is the act's verdict: the run would claim the action workflow, which the model launches on its own.
  const act = createActOnRecordActivity({
    tools,
    ledger,
    execute: createExecuteAction({ tools, ledger, crash: () => undefined, sleep: async () => undefined }),
    crash: () => undefined,
  });
  const action = { key: world.key, intent, requestHash, tenant: 'acme', owner: OWNER };
  return new MockActivityEnvironment({ attempt: execution.attempt }, { logger: QUIET }).run(act, {
    action,
    token: 'tok',
    generation: execution.generation,
  });
}

export async function runWorkflow(world: World, actor: Actor, runId: string): Promise<void> {
  const { tools, intent, requestHash } = keylessTool(actor);
  const ledger = actor.ledger;
  const { claimLedgerRow, recordLedger } = createRecordLedger({ ledger });
  const holder = `action:${runId}`;
  const row = { key: world.key, tenant: 'acme', requestHash, owner: OWNER, claimedAt: new Date().toISOString() };
  // A replay of the run finds its claim in its history: the local activity is not run again once it completed.
  let claim = world.history.get(runId) ?? (await claimLedgerRow({ ...row, holder }));
  for (let waits = 0; claim.kind === 'busy'; waits++) {
    if (waits >= 3) return; // still busy: the workflow sleeps on; its later claims are another actor's
    await actor.step('sleep while busy');
    claim = await claimLedgerRow({ ...row, holder });
  }
  world.history.set(runId, claim);
  if (claim.kind === 'mismatch' || claim.kind === 'settled') return;
  const base =
    claim.kind === 'unresolved' ? claim.recovered.seq + 1 : claim.kind === 'handed-over' ? claim.from.seq + 1 : 0;
  const entry = (index: number, status: ActionStatus, extra: { providerRef?: string } = {}): RecordLedgerInput => ({
    ...row,
    holder,
    status: {
      seq: base + index,
      status,
      at: new Date().toISOString(),
      reason: `${status}, by the action workflow`,
      ...extra,
      settled: isFinal(status),
    },
  });
  await recordLedger(entry(0, 'planned'));
  const mayHaveBeenSent =
    claim.kind === 'unresolved' || (claim.kind === 'handed-over' && claim.from.status !== 'planned');
  if (mayHaveBeenSent) {
    // A key-less provider without lookup: reconciliation cannot learn the outcome, so the action is unknown.
    await recordLedger(entry(1, 'unknown'));
    return;
  }
  const before = await settleBeforeSend(
    { tools, ledger, metrics: noRetrysafeMetrics, now: Date.now },
    { key: world.key, intent, record: entry(1, 'dispatching') },
  );
  if (before.earlierMayHaveSent) {
    await recordLedger(entry(2, 'unknown'));
    return;
  }
  const sent = await actor.send();
  await recordLedger(sent.replyLost ? entry(2, 'unknown') : entry(2, 'confirmed', { providerRef: sent.ref }));
}

export const SWEEPER = 'sweeper';

export async function runSweeper(world: World, actor: Actor): Promise<void> {
  const ledger = actor.ledger;
  const row = await ledger.get(world.key);
  if (!row || row.status !== 'planned' || !row.holder?.startsWith('run:')) return;
  if (row.leaseUntil && Date.parse(row.leaseUntil) > Date.now()) return;
  const taken = await ledger.takeOver(row.key, row.epoch, SWEEPER);
  if (!taken || taken.status !== 'planned') return;
  await ledger.recordStatus({
    key: row.key,
    seq: taken.seq + 1,
    status: 'failed',
    at: new Date().toISOString(),
    reason: 'its run ended before its act sent anything',
    by: SWEEPER,
    holder: SWEEPER,
    settled: true,
  });
}
