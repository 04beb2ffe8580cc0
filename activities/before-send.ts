/**
 * What the executor settles before anything of a dispatch the action workflow hands it can reach the provider. The
 * ledger row tells whether an earlier attempt of this dispatch got past them (its `dispatching` entry is written after the checks and before the first request):
 *
 *   the row holds this dispatch's entry ─▶ an earlier attempt passed, and may have sent: maybe-sent, no re-check
 *   otherwise (nothing of this dispatch was sent):
 *     approval handed over? ─▶ re-read this worker's trust and the tenant's policy
 *          key no longer trusted, approval expired ─▶ DecisionRejected, nothing sent
 *          the policy now wants a person ─▶ PolicyChanged, nothing sent
 *     write the `dispatching` entry to the row the workflow holds; held by another ─▶ this attempt sends nothing
 *     the attempt counts as the first, whatever its number
 *   then the executor's table (execute-action.ts)
 *
 * Both used to run in the workflow task that took the approval, as two local activities, so the person approving
 * waited for them. Here they run in the process that is about to send, as late as they can be: a key revoked while
 * the task was scheduled still stops the send, and the row still says `dispatching` before the first request.
 */
import type { ActionLedger } from '../ledger';
import { decideAction, type DecisionMode } from '../policies/decision-table';
import { RetrysafeError } from '../policies/errors';
import type { Intent, ToolRegistry } from '../policies/tool-registry';
import type { RetrysafeMetrics } from '../metrics/instruments';
import type { VolatilePolicy } from './load-action-policy';
import { recordEntry, type RecordLedgerInput } from './record-ledger';

/** The signed approval a dispatch acts on, as the action workflow verified it when it arrived. */
export interface ApprovalToRecheck {
  /** The approval service key that signed it. */
  publicKeyId: string;
  expiresAt: string;
  /** The operator who approved. */
  by: string;
  /** How the policy decided when the action began to wait. */
  decisionMode: DecisionMode;
}

export interface BeforeSendDeps {
  tools: ToolRegistry;
  ledger: ActionLedger;
  /** The facts that may have changed while the action waited (activities/load-action-policy.ts). */
  volatilePolicy?: (tenant: string) => Promise<VolatilePolicy>;
  metrics: RetrysafeMetrics;
  now: () => number;
}

export interface BeforeSendInput {
  key: string;
  intent: Intent;
  /** The action workflow's `dispatching` entry for the row it holds (its tenant is the action's). */
  record: RecordLedgerInput;
  approval?: ApprovalToRecheck;
}

/**
 * Throws, with nothing sent by this attempt, when the dispatch must not go on. Answers whether an earlier attempt of
 * this dispatch got as far as its entry, and so may have sent.
 */
export async function settleBeforeSend(
  deps: BeforeSendDeps,
  input: BeforeSendInput,
): Promise<{ earlierMayHaveSent: boolean }> {
  const { ledger } = deps;
  const row = await ledger.get(input.key);
  if (row && row.seq >= input.record.status.seq) return { earlierMayHaveSent: true };
  if (input.approval) await recheckApproval(deps, input, input.approval);
  await writeDispatchEntry(ledger, deps.metrics, input.record);
  return { earlierMayHaveSent: false };
}

async function recheckApproval(deps: BeforeSendDeps, input: BeforeSendInput, approval: ApprovalToRecheck) {
  if (!deps.volatilePolicy) {
    // A worker built without the policy loader cannot vouch for the approval; one built by createActivities can.
    throw new Error(`this worker cannot re-read its trust; the approval of ${input.key} is not acted on here`);
  }
  const fresh = await deps.volatilePolicy(input.record.tenant);
  const { publicKeyId, by } = approval;
  if (!fresh.trustedApprovalKeys[publicKeyId]) {
    throw refusal('DecisionRejected', `approval key ${publicKeyId} is no longer trusted; nothing was sent`, {
      reason: 'revoked-key',
      by,
    });
  }
  if (Date.parse(approval.expiresAt) <= deps.now()) {
    throw refusal('DecisionRejected', `the approval by ${by} expired before the action could start; nothing was sent`, {
      reason: 'expired',
      by,
    });
  }
  const intent = deps.tools.parseIntent(input.intent);
  const now = decideAction(deps.tools.describe(intent), intent, fresh.tenantPolicy);
  if (now.mode === 'human-only' && approval.decisionMode !== 'human-only') {
    throw refusal(
      'PolicyChanged',
      `policy changed since the approval: now human-only (${now.reasons.join('; ') || now.rows.join(', ')})`,
      { by, rows: now.rows },
    );
  }
}

async function writeDispatchEntry(ledger: ActionLedger, metrics: RetrysafeMetrics, record: RecordLedgerInput) {
  const write = await recordEntry(ledger, metrics, record);
  if (!write.applied) {
    const holder = record.holder ?? 'this workflow';
    throw new Error(`${holder} no longer holds the row of ${record.key}; nothing is sent from here`);
  }
}

function refusal(code: 'DecisionRejected' | 'PolicyChanged', message: string, details: Record<string, unknown>) {
  return new RetrysafeError(code, message, details).toFailure();
}
