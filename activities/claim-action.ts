import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { RetrysafeError, errorCodeOf } from '../policies/errors';
import { WORKFLOW_TASK_TIMEOUT } from '../policies/timeouts';
import { SA_KIND, SA_OPERATION, SA_REFERENCE, SA_STATUS, SA_TENANT } from '../policies/search-attributes';
import { contractFor, redactedPreview, summarizeIntent } from '../policies/tool-contracts';
import { claimUpdate, type ClaimRequest, type EffectInput, type EffectSnapshot } from '../workflows/effect-api';

export interface ClaimActionInput {
  effect: EffectInput;
  claim: ClaimRequest;
}

/**
 * Claims an action: starts its workflow (ID = action key) or attaches to the running one, in one
 * update-with-start call. The server's ID uniqueness makes one owner of each key across all runs;
 * the update's validator rejects a claim carrying another request hash. A closed action is answered
 * from its recorded result, never re-executed (ID reuse is rejected).
 */
export async function claimAction(client: Client, taskQueue: string, input: ClaimActionInput): Promise<EffectSnapshot> {
  const { effect, claim } = input;
  const reference = providerReference(effect);
  const startWorkflowOperation = new WithStartWorkflowOperation('effectWorkflow', {
    workflowId: effect.key,
    taskQueue,
    args: [effect],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    staticSummary: summarizeIntent(effect.intent),
    staticDetails: `action ${effect.key}\nrequest hash ${effect.requestHash}`,
    memo: { intentPreview: redactedPreview(effect.intent), requestHash: effect.requestHash },
    typedSearchAttributes: [
      { key: SA_KIND, value: 'action' },
      { key: SA_STATUS, value: 'planned' },
      { key: SA_OPERATION, value: effect.intent.operation },
      { key: SA_TENANT, value: effect.tenant },
      ...(reference ? [{ key: SA_REFERENCE, value: reference }] : []),
    ],
  });
  try {
    return await client.workflow.executeUpdateWithStart(claimUpdate, {
      args: [claim],
      startWorkflowOperation,
      // A retried claim (same claimant, same request) is deduplicated by the server. The hash is part of
      // the ID so that a later claim with another request is validated instead of answered from the first.
      updateId: `claim:${claim.claimant}:${claim.requestHash}`,
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && errorCodeOf(err) === 'IntentMismatch') {
      const cause = err.cause as { message?: string; details?: unknown[] } | undefined;
      throw new RetrysafeError('IntentMismatch', cause?.message ?? err.message, { key: effect.key });
    }
    if (isAlreadyClosed(err)) return answerFromClosedAction(client, effect, claim);
    throw err;
  }
}

/** The reference the provider knows this action by, when it is not the key itself. */
function providerReference(effect: EffectInput): string | undefined {
  const contract = contractFor(effect.intent.operation);
  const ref = (contract.lookupReference as ((i: unknown, key: string) => string) | undefined)?.(effect.intent, effect.key);
  return ref && ref !== effect.key ? ref : undefined;
}

function isAlreadyClosed(err: unknown): boolean {
  for (let e = err as { cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return true;
  }
  return false;
}

async function answerFromClosedAction(client: Client, effect: EffectInput, claim: ClaimRequest): Promise<EffectSnapshot> {
  const snapshot = (await client.workflow.getHandle(effect.key).result()) as EffectSnapshot;
  if (snapshot.requestHash !== claim.requestHash) {
    throw new RetrysafeError(
      'IntentMismatch',
      `action ${effect.key} was executed with request hash ${snapshot.requestHash.slice(0, 12)}…; this claim carries ${claim.requestHash.slice(0, 12)}…. A changed request needs a new action key.`,
      { key: effect.key, expected: snapshot.requestHash, got: claim.requestHash },
    );
  }
  return snapshot;
}

/** The activity form: typed errors leave as non-retryable ApplicationFailures. */
export function createClaimActionActivity(deps: { client: Client; taskQueue: string }) {
  return async function claimActionActivity(input: ClaimActionInput): Promise<EffectSnapshot> {
    Context.current().log.info('claim', { key: input.effect.key, claimant: input.claim.claimant });
    try {
      return await claimAction(deps.client, deps.taskQueue, input);
    } catch (err) {
      if (err instanceof RetrysafeError) throw err.toFailure();
      throw err;
    }
  };
}
