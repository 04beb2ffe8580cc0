/**
 * The application-facing client. Application code starts runs by business event, looks actions up by
 * key and lists them by status; it never builds workflow IDs or keys by hand.
 *
 *   const rs = new RetrysafeClient(client);
 *   const run = await rs.startRenewal({ tenant: 'acme', eventId: 'renewal-2026-08-28-01', ... });
 *   const result = await run.result();
 *   const action = await rs.getAction('charge:v1:acme:renewal-2026-08-28-01');
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { claimAction } from '../activities/claim-action';
import { actionKeyForStep, parseActionKey, runWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import type { EffectStatus } from '../policies/effect-status';
import { parseIntent, type Intent, type Operation } from '../policies/intents';
import { requestHash } from '../policies/request-hash';
import { SA_KIND, SA_OPERATION, SA_PROVIDER_REF, SA_STATUS, SA_TENANT, SA_WAITING_ON } from '../policies/search-attributes';
import { contractFor, summarizeIntent } from '../policies/tool-contracts';
import { WORKFLOW_TASK_TIMEOUT } from '../policies/timeouts';
import { DEFAULT_TASK_QUEUE } from '../workers/config';
import {
  providerEventSignal,
  resolveUpdate,
  statusQuery,
  type EffectSnapshot,
  type OperatorResolution,
  type ProviderEvent,
} from '../workflows/effect-api';
import type { RenewalInput } from '../workflows/renewal';
import { FULFILLMENT_AGENT, type FulfillmentInput } from '../workflows/fulfillment-agent';
import type { AgentRunInput } from '../workflows/agent-run';

export interface ActionListing {
  key: string;
  status: string;
  operation: string;
  tenant: string;
  providerRef?: string;
  running: boolean;
  startTime: Date;
  summary?: string;
}

export interface ActionFilter {
  status?: EffectStatus | EffectStatus[];
  tenant?: string;
  operation?: Operation;
  /** Only actions started before this long ago (milliseconds). */
  olderThanMs?: number;
  limit?: number;
}

export class RetrysafeClient {
  constructor(
    readonly client: Client,
    readonly options: { taskQueue?: string } = {},
  ) {}

  get taskQueue(): string {
    return this.options.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /**
   * Starts the renewal run for one business event, or attaches to it when it already exists. Starting
   * the same event with different input is refused (IntentMismatch), never silently attached.
   */
  async startRenewal(input: RenewalInput): Promise<WorkflowHandle> {
    return this.startRun('renewalWorkflow', input.tenant, input.eventId, input);
  }

  /**
   * Starts the fulfillment agent for an event: it waits for the upstream action (usually the charge) to be
   * confirmed before it announces dispatch to the customer.
   */
  async startFulfillment(input: FulfillmentInput): Promise<WorkflowHandle> {
    return this.startRun('fulfillmentAgentWorkflow', input.tenant, input.eventId, input, FULFILLMENT_AGENT);
  }

  /** Starts an agent run (read → plan → act with recorded model decisions) for one event and agent. */
  async startAgentRun(input: AgentRunInput): Promise<WorkflowHandle> {
    return this.startRun('agentRunWorkflow', input.tenant, input.eventId, input, input.agent);
  }

  /** Starts any run workflow whose ID is derived from tenant, event and (for one of several agents) agent name. */
  async startRun(workflowType: string, tenant: string, eventId: string, input: unknown, agent?: string): Promise<WorkflowHandle> {
    const workflowId = runWorkflowId(tenant, eventId, agent);
    const inputHash = requestHash(input);
    try {
      await this.client.workflow.start(workflowType, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        memo: { inputHash },
        staticSummary: `${workflowType} for ${tenant}/${eventId}`,
        typedSearchAttributes: [
          { key: SA_KIND, value: 'run' },
          { key: SA_TENANT, value: tenant },
          { key: SA_STATUS, value: 'running' },
        ],
      });
    } catch (err) {
      // A closed run with this ID: attach to it (its result is the answer), after the input check below.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    await this.checkRunInput(workflowId, inputHash);
    return this.client.workflow.getHandle(workflowId);
  }

  private async checkRunInput(workflowId: string, inputHash: string): Promise<void> {
    const description = await this.client.workflow.getHandle(workflowId).describe();
    const recorded = description.memo?.inputHash;
    if (recorded !== undefined && recorded !== inputHash) {
      throw new RetrysafeError(
        'IntentMismatch',
        `run ${workflowId} already exists with other input (hash ${String(recorded).slice(0, 12)}…, this start ${inputHash.slice(0, 12)}…); a new request needs a new event ID`,
        { workflowId },
      );
    }
  }

  /**
   * Claims an action directly from application code (one owner per key across runs and clients).
   * Returns the existing outcome for the same intent; refuses another intent under the same key.
   */
  async claimAction(
    where: { tenant: string; eventId: string; stepId?: string; claimant?: string },
    rawIntent: Intent,
  ): Promise<EffectSnapshot> {
    const intent = parseIntent(rawIntent);
    const contract = contractFor(intent.operation);
    const runId = runWorkflowId(where.tenant, where.eventId);
    const key = actionKeyForStep(runId, { operation: intent.operation, version: contract.version, stepId: where.stepId });
    const hash = requestHash(intent, contract.secretFields);
    return claimAction(this.client, this.taskQueue, {
      effect: { key, intent, requestHash: hash, tenant: where.tenant, owner: where.claimant ?? 'client:application' },
      claim: { requestHash: hash, claimant: where.claimant ?? 'client:application' },
    });
  }

  /** The action's current snapshot (status, provider reference, checks, audit), or undefined if no such key. */
  async getAction(key: string): Promise<EffectSnapshot | undefined> {
    parseActionKey(key);
    const handle = this.client.workflow.getHandle(key);
    try {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') return await handle.query(statusQuery);
      if (description.status.name === 'COMPLETED') return (await handle.result()) as EffectSnapshot;
      return await handle.query(statusQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  /** Lists actions through their search attributes (the same query the Web UI can run). */
  async listActions(filter: ActionFilter = {}): Promise<ActionListing[]> {
    const clauses = [`${SA_KIND.name} = 'action'`];
    const statuses = filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
    if (statuses.length) clauses.push(`${SA_STATUS.name} IN (${statuses.map(quote).join(', ')})`);
    if (filter.tenant) clauses.push(`${SA_TENANT.name} = ${quote(filter.tenant)}`);
    if (filter.operation) clauses.push(`${SA_OPERATION.name} = ${quote(filter.operation)}`);
    if (filter.olderThanMs !== undefined) clauses.push(`StartTime < ${quote(new Date(Date.now() - filter.olderThanMs).toISOString())}`);
    const out: ActionListing[] = [];
    for await (const wf of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const sa = wf.typedSearchAttributes;
      out.push({
        key: wf.workflowId,
        status: String(sa.get(SA_STATUS) ?? '?'),
        operation: String(sa.get(SA_OPERATION) ?? '?'),
        tenant: String(sa.get(SA_TENANT) ?? '?'),
        ...(sa.get(SA_PROVIDER_REF) ? { providerRef: String(sa.get(SA_PROVIDER_REF)) } : {}),
        running: wf.status.name === 'RUNNING',
        startTime: wf.startTime,
      });
      if (filter.limit && out.length >= filter.limit) break;
    }
    return out;
  }

  /** Runs currently waiting on an upstream action, with the key they wait for (interlocks). */
  async listWaitingRuns(filter: { tenant?: string; limit?: number } = {}): Promise<Array<{ workflowId: string; waitingOn: string; status: string }>> {
    const clauses = [`${SA_KIND.name} = 'run'`, `${SA_WAITING_ON.name} IS NOT NULL`, `ExecutionStatus = 'Running'`];
    if (filter.tenant) clauses.push(`${SA_TENANT.name} = ${quote(filter.tenant)}`);
    const out: Array<{ workflowId: string; waitingOn: string; status: string }> = [];
    for await (const wf of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      out.push({
        workflowId: wf.workflowId,
        waitingOn: String(wf.typedSearchAttributes.get(SA_WAITING_ON) ?? ''),
        status: String(wf.typedSearchAttributes.get(SA_STATUS) ?? '?'),
      });
      if (filter.limit && out.length >= filter.limit) break;
    }
    return out;
  }

  /** Records an operator's decision on an unknown or needs_review action. */
  async resolveAction(key: string, resolution: OperatorResolution): Promise<EffectSnapshot> {
    parseActionKey(key);
    return this.client.workflow.getHandle(key).executeUpdate(resolveUpdate, { args: [resolution] });
  }

  /** Routes a provider webhook or settlement event to its action by key. */
  async deliverProviderEvent(key: string, event: ProviderEvent): Promise<void> {
    parseActionKey(key);
    await this.client.workflow.getHandle(key).signal(providerEventSignal, event);
  }

  /** A one-line description of an intent, as the Web UI shows it. */
  static describeIntent(intent: Intent): string {
    return summarizeIntent(parseIntent(intent));
  }
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
