/**
 * The claim of an action: its ledger row first, then update-with-start of its workflow: what application code, agents, the sweeper and the run's activities all call. It loads no
 * activity or worker code, so a client that claims does not either.
 */
import type { Client } from '@temporalio/client';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { ActionLedger, LedgerAuditEntry, LedgerRow } from '../ledger';
import { isFinal, type ActionStatus } from '../policies/action-status';
import { RetrysafeError, errorCodeOf, errorDetailsOf } from '../policies/errors';
import { ACTION_WORKFLOW_TASK_TIMEOUT } from '../policies/timeouts';
import { SA_KIND, SA_OPERATION, SA_REFERENCE, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import type { ToolRegistry } from '../policies/tool-registry';
import {
  ACTION_WORKFLOW_TYPE,
  claimUpdate,
  type ClaimRequest,
  type ActionInput,
  type ActionSnapshot,
  type AuditEntry,
} from '../messages/action';

export interface ClaimActionInput {
  action: ActionInput;
  claim: ClaimRequest;
}

export interface ClaimDeps {
  client: Client;
  taskQueue: string;
  tools: ToolRegistry;
  /** The durable ledger: the action's row is read before anything else. */
  ledger: ActionLedger;
}

/**
 * Claims an action. Its ledger row answers first: another request under the key is refused, a settled row is the
 * answer (nothing starts, nothing is sent). Otherwise the claim starts the action workflow (ID = action key) or
 * attaches to the running one, in one update-with-start call; the workflow takes the row over before it acts. The
 * server's ID uniqueness makes one owner of each key across all runs; the update's validator rejects a claim
 * carrying another request hash. A closed action is answered from its recorded result, never re-executed (ID reuse
 * is rejected).
 *
 * The answer is the action's state now: the claim handler is idempotent (a claimant is added once), so
 * the update carries no fixed ID for the server to answer a repeat claim from its first result.
 */
export async function claimAction(deps: ClaimDeps, input: ClaimActionInput): Promise<ActionSnapshot> {
  const { action, claim } = input;
  const { client, tools } = deps;
  const recorded = await deps.ledger.get(action.key);
  if (recorded && recorded.requestHash !== claim.requestHash) {
    throw new RetrysafeError(
      'IntentMismatch',
      `action ${action.key} was claimed with request hash ${recorded.requestHash.slice(0, 12)}… (the ledger's record); ` +
        `this claim carries ${claim.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
      { key: action.key, expected: recorded.requestHash, got: claim.requestHash, source: 'ledger' },
    );
  }
  if (recorded && isFinal(recorded.status)) return snapshotFromLedger(deps.ledger, recorded);
  const reference = tools.reference(action.intent, action.key);
  const summary = tools.summarize(action.intent);
  const startWorkflowOperation = new WithStartWorkflowOperation(ACTION_WORKFLOW_TYPE, {
    workflowId: action.key,
    taskQueue: deps.taskQueue,
    args: [action],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    workflowTaskTimeout: ACTION_WORKFLOW_TASK_TIMEOUT,
    staticSummary: summary,
    staticDetails: `action ${action.key}\nrequest hash ${action.requestHash}`,
    memo: { intentPreview: tools.preview(action.intent), requestHash: action.requestHash },
    typedSearchAttributes: [
      { key: SA_KIND, value: 'action' },
      { key: SA_STATUS, value: 'planned' },
      { key: SA_OPERATION, value: action.intent.operation },
      { key: SA_TENANT, value: action.tenant },
      ...(reference ? [{ key: SA_REFERENCE, value: reference }] : []),
    ],
  });
  try {
    return await client.workflow.executeUpdateWithStart(claimUpdate, { args: [claim], startWorkflowOperation });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      // The claim's validator or handler refused (another request under the key): its typed error, with its reason.
      const code = errorCodeOf(err);
      const cause = err.cause as { message?: string } | undefined;
      if (code) {
        throw new RetrysafeError(
          code,
          cause?.message ?? err.message,
          { key: action.key, ...errorDetailsOf(err) },
          {
            cause: err,
          },
        );
      }
    }
    if (isAlreadyClosed(err)) return answerFromClosedAction(client, action, claim);
    throw err;
  }
}

/** The action as the ledger holds it, in the snapshot's shape (`source: 'ledger'`): its outcome and audit trail. */
export async function snapshotFromLedger(ledger: ActionLedger, row: LedgerRow): Promise<ActionSnapshot> {
  const audit = await ledger.audit(row.key);
  return {
    key: row.key,
    operation: row.operation,
    tenant: row.tenant,
    status: row.status,
    requestHash: row.requestHash,
    owner: row.owner,
    claimants: [row.owner],
    summary: row.outcome ?? row.key,
    ...(row.providerRef ? { providerRef: row.providerRef } : {}),
    sends: 0,
    dispatches: 0,
    checks: [],
    audit: auditTrailOf(audit),
    source: 'ledger',
  };
}

/** A ledger's audit entries as an action's audit trail: each entry's `from` is the status before it. */
export function auditTrailOf(entries: readonly LedgerAuditEntry[]): AuditEntry[] {
  let previous: ActionStatus | null = null;
  return entries.map((e) => {
    const entry: AuditEntry = {
      at: e.at,
      from: previous,
      to: e.status,
      reason: e.reason,
      ...(e.by ? { by: e.by } : {}),
    };
    previous = e.status;
    return entry;
  });
}

function isAlreadyClosed(err: unknown): boolean {
  for (let e = err as { cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return true;
  }
  return false;
}

async function answerFromClosedAction(
  client: Client,
  action: ActionInput,
  claim: ClaimRequest,
): Promise<ActionSnapshot> {
  const snapshot = (await client.workflow.getHandle(action.key).result()) as ActionSnapshot;
  if (snapshot.requestHash !== claim.requestHash) {
    throw new RetrysafeError(
      'IntentMismatch',
      `action ${action.key} was executed with request hash ${snapshot.requestHash.slice(0, 12)}…; this claim carries ${claim.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
      { key: action.key, expected: snapshot.requestHash, got: claim.requestHash },
    );
  }
  return snapshot;
}

/** What `work` gives, unless `ms` pass first: then an Error with `message` (the work itself is not stopped). */
export async function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
