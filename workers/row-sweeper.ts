/**
 * Rows the record-first path left behind, and nobody else will come back for. A run's act holds its action's ledger
 * row while it sends; if the act's worker dies, Temporal retries the act, and if the act gives up, the run claims the
 * action workflow itself. Only when the run is no longer running (terminated, timed out, failed, reset, deleted) can
 * a row stay `planned`, `dispatching` or `unknown` with nobody to settle it. Every worker that keeps the ledger sweeps
 * for such rows once their act's lease has ended:
 *
 *   planned                 nothing was sent (dispatching is written before any send): the row fails, nothing is sent
 *   dispatching | unknown   a request may have reached the provider: the action workflow is claimed with the intent
 *                           the act was scheduled with (from the run's history), takes the row over and reconciles
 *   the run's history gone  nothing can say what the intent was: an `abandoned` alarm for a person (ops alarms)
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActionLedger, LedgerRow } from '../ledger';
import { RUN_HOLDER_PREFIX } from '../activities/record-ledger';
import { claimAction, within } from '../transport/claim-action';
import type { ActionInput } from '../messages/action';
import type { ToolRegistry } from '../policies/tool-registry';
import { recordedRun } from '../client/recorded-acts';

/** How many unsettled rows one sweep reads (newest claims first); the rest wait for the next sweep. */
const SWEEP_BATCH = 500;
/** How long a sweep waits for an action workflow to answer its claim. */
const CLAIM_WAIT_MS = 30_000;
/** How often a worker sweeps by default: a row waits at most this long past its act's lease. */
export const DEFAULT_SWEEP_EVERY_MS = 30_000;
/** Who the sweeper writes and claims as. */
export const SWEEPER = 'sweeper';

export interface RowSweepDeps {
  ledger: ActionLedger;
  client: Client;
  taskQueue: string;
  tools: ToolRegistry;
  now?: () => number;
}

/** What one sweep did, by key. */
export interface RowSweep {
  /** Rows left `planned` by a run that ended: failed, nothing sent. */
  failed: string[];
  /** Rows handed to their action workflow to reconcile. */
  handedOver: string[];
  /** Rows whose intent could not be found: an alarm each (once). */
  abandoned: string[];
}

/** One sweep over the unsettled rows (see the module comment). */
export async function sweepRows(deps: RowSweepDeps): Promise<RowSweep> {
  const now = deps.now ?? Date.now;
  const out: RowSweep = { failed: [], handedOver: [], abandoned: [] };
  const rows = await deps.ledger.history({ status: ['planned', 'dispatching', 'unknown'], limit: SWEEP_BATCH });
  for (const row of rows) {
    if (!row.holder?.startsWith(RUN_HOLDER_PREFIX) || !row.leaseUntil || Date.parse(row.leaseUntil) > now()) continue;
    const run = await runState(deps.client, row.owner);
    // A running run's act is retried by Temporal, or the run claims the action workflow when the act gives up.
    if (run === 'running') continue;
    if (row.status === 'planned') {
      if (await failUnsent(deps.ledger, row, run)) out.failed.push(row.key);
      continue;
    }
    const action = run === 'closed' ? await scheduledAction(deps.client, row) : undefined;
    if (!action) {
      const known = await deps.ledger.alarms({ key: row.key });
      if (!known.some((a) => a.kind === 'abandoned')) {
        await deps.ledger.raiseAlarm(
          row.key,
          'abandoned',
          `left ${row.status} by ${row.holder}; its run ${row.owner} is ${run === 'gone' ? 'gone, with its history' : 'closed, and its history holds neither the act nor its intent (a run ended while its act ran in its workflow task)'}, so nothing can say what the intent was: ask the provider, then settle it by hand`,
        );
        out.abandoned.push(row.key);
      }
      continue;
    }
    await within(
      claimAction(
        { client: deps.client, taskQueue: deps.taskQueue, tools: deps.tools, ledger: deps.ledger },
        { action, claim: { requestHash: row.requestHash, claimant: SWEEPER } },
      ),
      CLAIM_WAIT_MS,
      `the action workflow of ${row.key} did not answer the sweeper within ${CLAIM_WAIT_MS} ms`,
    );
    out.handedOver.push(row.key);
  }
  return out;
}

/** Starts sweeping every `everyMs`; a failed sweep is reported and the next one tries again. */
export function sweepRowsEvery(
  deps: RowSweepDeps & { everyMs: number; onSweep?: (sweep: RowSweep) => void; onError?: (err: Error) => void },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepRows(deps).then(
      (sweep) => deps.onSweep?.(sweep),
      (err: Error) => deps.onError?.(err),
    );
  }, deps.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

async function runState(client: Client, runId: string): Promise<'running' | 'closed' | 'gone'> {
  try {
    const d = await client.workflow.getHandle(runId).describe();
    return d.status.name === 'RUNNING' ? 'running' : 'closed';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'gone';
    throw err;
  }
}

/** Fails a row no send can have left (`planned`), as the sweeper, if it still stands as read. */
async function failUnsent(ledger: ActionLedger, row: LedgerRow, run: 'closed' | 'gone'): Promise<boolean> {
  const taken = await ledger.takeOver(row.key, row.epoch, SWEEPER);
  if (!taken || taken.status !== 'planned') return false;
  const write = await ledger.recordStatus({
    key: row.key,
    seq: taken.seq + 1,
    status: 'failed',
    at: new Date().toISOString(),
    reason: `its run ${row.owner} ${run === 'gone' ? 'is gone' : 'ended'} before its act sent anything; nothing was sent`,
    by: SWEEPER,
    holder: SWEEPER,
    outcome: 'failed: RunEnded: nothing was sent',
    settled: true,
  });
  return write.applied;
}

/**
 * The action the run acted on for this row, from its history: an act scheduled as an activity carries it (its holder
 * names the act's token); for an act in the run's own workflow task (a local activity, whose input is not recorded),
 * the intent the run prepared with the row's request hash and operation, which is that action's intent.
 */
async function scheduledAction(client: Client, row: LedgerRow): Promise<ActionInput | undefined> {
  const run = await recordedRun(client, row.owner);
  const scheduled = run.acts.find(
    ({ input }) =>
      input?.action.key === row.key && row.holder?.startsWith(`${RUN_HOLDER_PREFIX}${row.owner}/${input.token}#`),
  )?.input;
  if (scheduled) return scheduled.action;
  const prepared = run.prepared.find((p) => p.requestHash === row.requestHash && p.intent.operation === row.operation);
  if (!prepared) return undefined;
  return {
    key: row.key,
    intent: prepared.intent,
    requestHash: prepared.requestHash,
    tenant: row.tenant,
    owner: row.owner,
  };
}
