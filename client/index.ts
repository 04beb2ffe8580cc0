/**
 * The application-facing client. Application code starts runs by business event, claims actions,
 * waits for their outcomes, looks them up by key and lists them by status; it never builds workflow IDs
 * or keys by hand. A runnable example: examples/application.ts.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { claimAction, snapshotFromLedger } from '../transport/claim-action';
import type { ActionLedger } from '../ledger';
import { snapshotFromRun } from './recorded-acts';
import { unrecordedRequests } from './unrecorded-requests';
import { actionKeyForStep, parseActionKey, runWorkflowId } from '../policies/action-key';
import { errorCodeOf, errorDetailsOf, RetrysafeError } from '../policies/errors';
import { isFinal, type ActionStatus } from '../policies/action-status';
import { requestHash } from '../policies/request-hash';
import {
  SA_KIND,
  SA_OPERATION,
  SA_PROVIDER_REF,
  SA_STATUS,
  SA_TENANT,
  SA_WAITING_ON,
} from '../policies/search-attributes';
import { WORKFLOW_TASK_TIMEOUT } from '../policies/timeouts';
import { cardNumberModeFor, type TenantPolicyConfig } from '../policies/tenant-policy';
import type { AnyTool } from '../policies/tool';
import { createToolRegistry, type Intent, type ToolRegistry } from '../policies/tool-registry';
import {
  DEFAULT_TASK_QUEUE,
  OUTCOME_STATUSES,
  outcomeUpdate,
  providerEventSignal,
  resolveUpdate,
  statusQuery,
  type ActionSnapshot,
  type AuditEntry,
  type ProviderEvent,
} from '../messages/action';
import {
  acceptRiskUpdate,
  AGENT_RUN_WORKFLOW_TYPE,
  cancelRunUpdate,
  raiseCeilingUpdate,
  resumeRunUpdate,
  type AgentRunInput,
} from '../messages/run';
import { approveUpdate, REFRESHABLE_REFUSALS, refreshTrustUpdate, type ApprovalOutcome } from '../messages/approval';
import type { SignedDecision } from '../policies/signed-decision';

/** One action as a list shows it, read from its search attributes (no payloads are decoded). */
export interface ActionListing {
  key: string;
  status: string;
  operation: string;
  tenant: string;
  providerRef?: string;
  running: boolean;
  startTime: Date;
}

/** Which actions `listActions` returns: by status, tenant, operation, and how many. */
export interface ActionFilter {
  status?: ActionStatus | ActionStatus[];
  tenant?: string;
  operation?: string;
  /** Only actions started before this long ago (milliseconds). */
  olderThanMs?: number;
  limit?: number;
}

/** The task queue the workers poll, the tools, and the ledger the workers keep (each action's only record). */
export interface RetrysafeClientOptions {
  taskQueue?: string;
  /** The tools actions are claimed with from application code: the same ones the workers register. */
  tools?: readonly AnyTool[] | ToolRegistry;
  /** The workers' tenant policies, so a claim treats card numbers in free text as the tenant chose. */
  tenantPolicies?: TenantPolicyConfig;
  /**
   * The durable ledger the workers write (ledger/): claims, `getAction` and `listActions` read each action's row
   * there. Default: opened on first use from the same RETRYSAFE_LEDGER the workers read (closed by `close()`); a
   * client without one refuses to claim or read, naming the setting.
   */
  ledger?: ActionLedger;
  /**
   * Start runs eagerly (Temporal's eager workflow start): the server hands the run's first workflow task to a worker
   * of this process in its answer to the start, with no poll in between; with the run's acts in that task, a short run
   * is done in one round trip. Set it when this client's `Client` is built on the `NativeConnection` of a worker running
   * in this process (an agent service with its own worker); the server ignores it otherwise, and the run starts as
   * usual. Default false.
   */
  eagerStart?: boolean;
}

/** A started (or attached) run: its handle, and whether the server handed its first task to this process's worker. */
export type StartedRun<W extends RunWorkflow = RunWorkflow> = WorkflowHandle<W> & { readonly eagerlyStarted: boolean };

/** A run workflow: one input argument (carrying tenant and event or not), any result. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RunWorkflow = (input: any) => Promise<unknown>;

/** Where {@link RetrysafeClient.startRun} starts a run: its identity and the workflow's input. */
export interface StartRunOptions<W extends RunWorkflow = RunWorkflow> {
  tenant: string;
  eventId: string;
  /** The workflow's one argument, typed by its parameter. */
  input: Parameters<W>[0];
  /** Names the agent when one event runs several agents. */
  agent?: string;
}

/**
 * Application code's way in: claims keyed actions (once per key, whoever asks again), waits for their outcome, reads
 * their state, lists them, and submits signed decisions. Build it over a Temporal Client with the same tools the
 * workers register.
 */
export class RetrysafeClient {
  private readonly registry: ToolRegistry | undefined;
  /** The ledger this client opened itself from RETRYSAFE_LEDGER (it closes it). */
  private opened: Promise<ActionLedger> | undefined;

  constructor(
    readonly client: Client,
    readonly options: RetrysafeClientOptions = {},
  ) {
    const tools = options.tools;
    this.registry =
      tools === undefined
        ? undefined
        : 'parseIntent' in tools
          ? tools
          : createToolRegistry(tools as readonly AnyTool[]);
  }

  get taskQueue(): string {
    return this.options.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /** The tools this client claims with; claiming without them is refused with what to pass. */
  get tools(): ToolRegistry {
    if (!this.registry) {
      throw new RetrysafeError(
        'InvalidTool',
        'this RetrysafeClient was built without tools: pass { tools } (the ones the workers register) to claim actions',
        {
          field: 'tools',
        },
      );
    }
    return this.registry;
  }

  /**
   * The ledger the workers keep: the one passed in, or the one RETRYSAFE_LEDGER names, opened once (its schema
   * checked, never migrated from here). Throws LedgerConfigError naming the setting when there is none.
   */
  async ledger(): Promise<ActionLedger> {
    if (this.options.ledger) return this.options.ledger;
    this.opened ??= import('../ledger/ledger-config').then(({ ledgerChoiceFromEnv, openLedger }) =>
      openLedger(ledgerChoiceFromEnv(), { migrate: false }),
    );
    // A failed open is not kept: the next call tries again (the worker may not have created the schema yet).
    return this.opened.catch((err: unknown) => {
      this.opened = undefined;
      throw err;
    });
  }

  /** Closes the ledger this client opened itself (not one passed in, nor the Temporal connection). */
  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }

  /** Starts an agent run (read → plan → act with recorded model decisions) for one event and agent. */
  async startAgentRun(input: AgentRunInput): Promise<StartedRun> {
    return this.startRunOfType(AGENT_RUN_WORKFLOW_TYPE, input.tenant, input.eventId, input, input.agent);
  }

  /**
   * Starts a run workflow, as Temporal's client does: `startRun(renewalWorkflow, { tenant, eventId, input })`, the
   * input checked against the workflow's parameter. Its ID is derived from tenant, event and (for one of several
   * agents) agent name; a second start with the same input attaches, with other input it fails `IntentMismatch`.
   * Where the client must not import the workflow module, name it with the type:
   * `startRun<typeof renewalWorkflow>('renewalWorkflow', …)`.
   */
  async startRun<W extends RunWorkflow>(workflow: W | string, options: StartRunOptions<W>): Promise<StartedRun<W>> {
    const workflowType = typeof workflow === 'string' ? workflow : workflow.name;
    if (!workflowType) {
      throw new RetrysafeError('InvalidConfig', 'startRun: the workflow function has no name; pass its type name');
    }
    const { eagerlyStarted } = await this.startRunOfType(
      workflowType,
      options.tenant,
      options.eventId,
      options.input,
      options.agent,
    );
    const handle = this.client.workflow.getHandle<W>(runWorkflowId(options.tenant, options.eventId, options.agent));
    return Object.assign(handle, { eagerlyStarted });
  }

  private async startRunOfType(
    workflowType: string,
    tenant: string,
    eventId: string,
    input: unknown,
    agent?: string,
  ): Promise<StartedRun> {
    const workflowId = runWorkflowId(tenant, eventId, agent);
    const inputHash = requestHash(input);
    let started = false;
    let eagerlyStarted = false;
    try {
      const handle = await this.client.workflow.start(workflowType, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [input],
        // FAIL, not USE_EXISTING, which answers a start that attached as it answers one that created the run: a start
        // that succeeds created this run with this input, so only a run that was there before is read back (below).
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        ...(this.options.eagerStart ? { requestEagerStart: true } : {}),
        memo: { inputHash },
        staticSummary: `${workflowType} for ${tenant}/${eventId}`,
        typedSearchAttributes: [
          { key: SA_KIND, value: 'run' },
          { key: SA_TENANT, value: tenant },
          { key: SA_STATUS, value: 'running' },
        ],
      });
      started = true;
      eagerlyStarted = handle.eagerlyStarted;
    } catch (err) {
      // A run with this ID, running or closed: attach to it (its result is the answer), after the input check below.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    if (!started) await this.checkRunInput(workflowId, inputHash);
    return Object.assign(this.client.workflow.getHandle(workflowId), { eagerlyStarted });
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
   * Claims an action directly from application code (one owner per key across runs and clients) and
   * answers with its current state, or with its outcome when `wait` is set. The same intent again gets
   * the same action (its state now, never a stale first answer); another intent under the same key is
   * refused with IntentMismatch. The key is `operation:vN:tenant:eventId[:step]`, as a run would derive it.
   */
  async claimAction(
    where: { tenant: string; eventId: string; step?: string; claimant?: string },
    rawIntent: Intent,
    options: { wait?: boolean; timeoutMs?: number } = {},
  ): Promise<ActionSnapshot> {
    const tools = this.tools;
    const intent = tools.parseIntent(rawIntent, {
      cardNumbers: cardNumberModeFor(this.options.tenantPolicies, where.tenant),
    });
    const tool = tools.describe(intent);
    const runId = runWorkflowId(where.tenant, where.eventId);
    const stepId = where.step === undefined || where.step === tool.name ? undefined : where.step;
    const key = actionKeyForStep(runId, { operation: tool.name, version: tool.version, stepId });
    const hash = tools.hash(intent);
    const claimant = where.claimant ?? 'client:application';
    const snapshot = await claimAction(
      { client: this.client, taskQueue: this.taskQueue, tools, ledger: await this.ledger() },
      {
        action: { key, intent, requestHash: hash, tenant: where.tenant, owner: claimant },
        claim: { requestHash: hash, claimant },
      },
    );
    if (!options.wait || OUTCOME_STATUSES.includes(snapshot.status)) return snapshot;
    return this.waitForOutcome(key, options);
  }

  /**
   * Resolves once the action has an outcome (confirmed, failed, compensating or compensated); it waits
   * through `unknown` and `needs_review`, because those are not answers. With `timeoutMs`, an action still
   * unresolved by then is answered as it stands.
   */
  async waitForOutcome(key: string, options: { timeoutMs?: number } = {}): Promise<ActionSnapshot> {
    parseActionKey(key);
    const handle = this.client.workflow.getHandle(key);
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return (await this.getAction(key))!;
    // The action may close while the update waits (a fast action settles between describe and update):
    // its recorded result is the answer then.
    // An update that lands as the action completes can fail with the workflow task the server refused
    // ("unexpected workflow task failure"); the action is about to close then, so ask again a few times.
    const ask = async (tries: number): Promise<ActionSnapshot> => {
      try {
        return await handle.executeUpdate(outcomeUpdate, { args: [] });
      } catch (err) {
        const closed = (await handle.describe()).status.name !== 'RUNNING';
        if (closed) return (await this.getAction(key))!;
        if (tries <= 1) throw err;
        await new Promise((r) => setTimeout(r, 250));
        return ask(tries - 1);
      }
    };
    const outcome = ask(3);
    if (options.timeoutMs === undefined) return outcome;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs)),
    );
    try {
      const first = await Promise.race([outcome, timedOut]);
      return first === 'timeout' ? (await this.getAction(key))! : first;
    } finally {
      clearTimeout(timer);
      outcome.catch(() => undefined);
    }
  }

  /**
   * The action's current snapshot, or undefined if no such key. Its record is its ledger row: status, provider
   * reference and audit trail come from there, whoever wrote them (a run's act, the action workflow, a crashed
   * holder's takeover). The process that handled it adds what the row does not keep: the requests sent and the
   * provider's answers, checks, evidence, the dry run, notes (the action workflow's state, or the run's recorded act).
   * Dispatches on the row that the process kept no request of are counted in `unrecordedSends`.
   */
  async getAction(key: string): Promise<ActionSnapshot | undefined> {
    parseActionKey(key);
    const ledger = await this.ledger();
    const row = await ledger.get(key);
    const process = await this.processView(key, row?.owner);
    if (!row) return process;
    const record = await snapshotFromLedger(ledger, row);
    return process ? withRecord(process, record) : record;
  }

  /** What the process that handled the action knows: its action workflow, or else the run that acted on the row. */
  private async processView(key: string, owner: string | undefined): Promise<ActionSnapshot | undefined> {
    const handle = this.client.workflow.getHandle(key);
    try {
      const description = await handle.describe();
      if (description.status.name === 'COMPLETED') return (await handle.result()) as ActionSnapshot;
      return await handle.query(statusQuery);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return snapshotFromRun(this.client, key, owner);
    }
  }

  /**
   * Lists actions through their search attributes (the same query the Web UI can run) and, when the client has the
   * ledger, the actions that never had a workflow (a run acted on their row) from the ledger.
   */
  async listActions(filter: ActionFilter = {}): Promise<ActionListing[]> {
    const clauses = [`${SA_KIND.name} = 'action'`];
    const statuses = filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
    if (statuses.length) clauses.push(`${SA_STATUS.name} IN (${statuses.map(quote).join(', ')})`);
    if (filter.tenant) clauses.push(`${SA_TENANT.name} = ${quote(filter.tenant)}`);
    if (filter.operation) clauses.push(`${SA_OPERATION.name} = ${quote(filter.operation)}`);
    if (filter.olderThanMs !== undefined)
      clauses.push(`StartTime < ${quote(new Date(Date.now() - filter.olderThanMs).toISOString())}`);
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
    if (filter.limit && out.length >= filter.limit) return out;
    const ledger = await this.ledger();
    const listed = new Set(out.map((a) => a.key));
    const rows = await ledger.history({
      ...(statuses.length ? { status: statuses } : {}),
      ...(filter.tenant ? { tenant: filter.tenant } : {}),
      ...(filter.operation ? { operation: filter.operation } : {}),
      ...(filter.olderThanMs !== undefined ? { until: new Date(Date.now() - filter.olderThanMs) } : {}),
      ...(filter.limit ? { limit: filter.limit - out.length } : {}),
    });
    for (const row of rows) {
      if (listed.has(row.key) || row.holder?.startsWith('action:')) continue;
      out.push({
        key: row.key,
        status: row.status,
        operation: row.operation,
        tenant: row.tenant,
        ...(row.providerRef ? { providerRef: row.providerRef } : {}),
        running: !isFinal(row.status),
        startTime: new Date(row.claimedAt),
      });
    }
    return out;
  }

  /** Runs currently waiting on an upstream action, with the key they wait for (interlocks). */
  async listWaitingRuns(
    filter: { tenant?: string; limit?: number } = {},
  ): Promise<Array<{ workflowId: string; waitingOn: string; status: string }>> {
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

  /**
   * Delivers a signed decision (from the approval service) to the workflow it names: the action for
   * approve, reject and resolve; the run for accept-risk (the run that re-planned the action), raise-ceiling,
   * resume and cancel. The workflow verifies it; a refusal comes back as a failed update whose error code
   * is `DecisionRejected` with the reason.
   */
  async submitDecision(signed: SignedDecision, runId?: string): Promise<unknown> {
    return submitDecision(this.client, signed, runId);
  }

  /**
   * A signed `approve` or `reject` of an action awaiting confirmation; answers once the action has taken
   * it (its status then is dispatching or further for an approval, failed for a rejection).
   */
  async approveAction(signed: SignedDecision): Promise<ApprovalOutcome> {
    if (signed.claims.decision !== 'approve' && signed.claims.decision !== 'reject') {
      throw new RetrysafeError(
        'InvalidIntent',
        `approveAction takes an approve or reject decision, not ${signed.claims.decision}`,
        { field: 'claims.decision' },
      );
    }
    return (await this.submitDecision(signed)) as ApprovalOutcome;
  }

  /** A signed `resolve` decision on an action in needs_review; answers with the action once it applied it. */
  async resolveAction(signed: SignedDecision): Promise<ActionSnapshot> {
    if (signed.claims.decision !== 'resolve') {
      throw new RetrysafeError(
        'InvalidIntent',
        `resolveAction takes a resolve decision, not ${signed.claims.decision}`,
        {
          field: 'claims.decision',
        },
      );
    }
    return (await this.submitDecision(signed)) as ActionSnapshot;
  }

  /** Routes a provider webhook or settlement event to its action by key. */
  async deliverProviderEvent(key: string, event: ProviderEvent): Promise<void> {
    parseActionKey(key);
    await this.client.workflow.getHandle(key).signal(providerEventSignal, event);
  }
}

/**
 * See RetrysafeClient.submitDecision. An accept-risk decision names the re-planned action; pass its run's
 * ID. A decision refused because the workflow does not know its key or its operator's scope (either may
 * have been added after the workflow began to wait) makes the workflow re-read its worker's trust, and is
 * sent once more; any other refusal, or the second one, is the caller's.
 */
export async function submitDecision(client: Client, signed: SignedDecision, runId?: string): Promise<unknown> {
  const target = signed.claims.decision === 'accept-risk' && runId ? runId : signed.claims.key;
  try {
    return await withTrustRefresh(client, target, () => deliverDecision(client, signed, runId));
  } catch (err) {
    throw typedRefusal(err);
  }
}

/**
 * A refused update as the typed error its validator raised: its code, message and reason (`details.reason`), with
 * the update's failure as its cause, instead of the SDK's "Workflow Update failed". Anything else is left as it is.
 */
export function typedRefusal(err: unknown): unknown {
  if (!(err instanceof WorkflowUpdateFailedError)) return err;
  const code = errorCodeOf(err);
  if (!code) return err;
  const message = (err.cause as { message?: string } | undefined)?.message ?? err.message;
  return new RetrysafeError(code, message, errorDetailsOf(err) ?? {}, { cause: err });
}

/**
 * Sends a decision with `send`; when the workflow `target` refuses it for a key or operator scope it
 * does not know, has the workflow re-read its worker's trust and sends once more.
 */
export async function withTrustRefresh<T>(client: Client, target: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!isRefreshableRefusal(err)) throw err;
    const refreshed = client.workflow
      .getHandle(target)
      .executeUpdate(refreshTrustUpdate, { args: [] })
      .then(
        () => true,
        // Refused (refreshed recently by someone else, or the worker could not answer): the second delivery shows.
        () => true,
      );
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), TRUST_REFRESH_WAIT_MS)));
    try {
      // A refresh that does not come back in time leaves the refusal as it was, rather than hang the caller.
      if (!(await Promise.race([refreshed, gaveUp]))) throw err;
    } finally {
      clearTimeout(timer);
    }
    return send();
  }
}

/** How long a client waits for a workflow to re-read its trust before it reports the refusal as it stands. */
export const TRUST_REFRESH_WAIT_MS = 15_000;

function isRefreshableRefusal(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError) || errorCodeOf(err) !== 'DecisionRejected') return false;
  const reason = errorDetailsOf(err)?.reason;
  return (REFRESHABLE_REFUSALS as readonly unknown[]).includes(reason);
}

async function deliverDecision(client: Client, signed: SignedDecision, runId?: string): Promise<unknown> {
  const { decision, key } = signed.claims;
  switch (decision) {
    case 'approve':
    case 'reject':
      parseActionKey(key);
      return client.workflow.getHandle(key).executeUpdate(approveUpdate, { args: [signed] });
    case 'resolve':
      parseActionKey(key);
      return client.workflow.getHandle(key).executeUpdate(resolveUpdate, { args: [signed] });
    case 'accept-risk':
      if (!runId)
        throw new RetrysafeError(
          'InvalidIntent',
          'accept-risk goes to the run that re-planned the action: pass its run ID',
          { field: 'runId' },
        );
      return client.workflow.getHandle(runId).executeUpdate(acceptRiskUpdate, { args: [signed] });
    case 'raise-ceiling':
      return client.workflow.getHandle(key).executeUpdate(raiseCeilingUpdate, { args: [signed] });
    case 'resume':
      return client.workflow.getHandle(key).executeUpdate(resumeRunUpdate, { args: [signed] });
    case 'cancel':
      return client.workflow.getHandle(key).executeUpdate(cancelRunUpdate, { args: [signed] });
  }
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The action as its row records it, with what the process adds: the row's status, provider reference and audit
 * trail, the process's notes (audit entries that change no status, which the row does not keep) merged in by time,
 * and the requests the row shows possible that the process kept no record of (`unrecordedSends`).
 */
export function withRecord(process: ActionSnapshot, record: ActionSnapshot): ActionSnapshot {
  // A run's act reports the ledger's own trail: its `dispatching → dispatching` resend is on record, not a note.
  const onRecord = new Set(record.audit.map(auditIdentity));
  const notes = process.audit.filter((e) => e.from === e.to && !onRecord.has(auditIdentity(e)));
  const audit = [...record.audit, ...notes].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const view: ActionSnapshot = { ...process, status: record.status, audit };
  const unrecorded = unrecordedRequests(record.audit, process.requests);
  if (unrecorded > 0) view.unrecordedSends = unrecorded;
  else delete view.unrecordedSends;
  if (record.providerRef) view.providerRef = record.providerRef;
  if (record.status !== 'failed' && record.status !== process.status) delete view.error;
  if (record.status === 'failed' && !view.error)
    view.error = record.error ?? { code: 'Failed', message: record.summary };
  if (process.source === 'ledger' || process.status !== record.status) view.source = 'ledger';
  return view;
}

function auditIdentity(e: AuditEntry): string {
  return `${e.at} ${e.to} ${e.reason}`;
}
