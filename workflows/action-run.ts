/**
 * How a run takes actions. One ActionRun per run workflow holds what the run knows of its actions;
 * `act` derives the key from the run's workflow ID and the step, has the worker's registry normalize
 * and hash the intent, claims the action (one owner across all runs), then waits durably for its
 * outcome. The run waits through `unknown` and `needs_review`: downstream steps never start on an
 * unresolved action.
 *
 *   act(intent, { step }) ─▶ prepare (local activity: schema, hash, contract) ─▶ key = f(run ID, tool, step)
 *        ─▶ [step re-planned with another hash: new key, waits for its predecessor] ─▶ claim (activity)
 *        ─▶ wait for confirmed | failed | compensated | compensating
 *
 * Every action whose tool declares a compensation is registered for the run's saga before it is
 * claimed, because a claim can half-succeed (reply lost, then an operator's "compensate"); `compensate`
 * then undoes what happened, newest first, each undo an action with its own key.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { ActOnRecordResult } from '../activities/act-on-record';
import type { PreparedAction } from '../activities/prepare-action';
import { actionKeyForStep, keyAtStep, parseActionKey, runWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import {
  actionKeysWithinLimit,
  SA_ACTION_KEYS,
  SA_KIND,
  SA_STATUS,
  SA_TENANT,
  SA_WAITING_ON,
} from '../policies/search-attributes';
import {
  CLAIM_HEARTBEAT_TIMEOUT,
  CLAIM_RETRY,
  CLAIM_START_TO_CLOSE,
  POLICY_START_TO_CLOSE,
  READ_START_TO_CLOSE,
  LOCAL_ACT,
  SENDING_ACTIVITY,
} from '../policies/timeouts';
import type { z } from 'zod';
import type { AnyTool, Json } from '../policies/tool';
import type { Intent } from '../policies/tool-registry';
import {
  OUTCOME_STATUSES,
  actionUpdateSignal,
  settleSignal,
  type ActionInput,
  type ActionSnapshot,
  type ClaimRequest,
  type Settlement,
} from '../messages/action';
import { acceptRiskUpdate, runStatusQuery, type CompensationResult, type RiskAcceptance } from '../messages/run';
import { DecisionGate, paramsOf } from './signed-decisions';

type Activities = ReturnType<typeof createActivities>;

/** How one step of a run acts: its step name (part of the key) and what it may do. */
export interface ActOptions {
  /**
   * The workflow's name for this step; part of the key. Defaults to the operation, so a run's only
   * charge is `charge:v1:<tenant>:<event>`; a second email needs its own step (`notify-customer`).
   */
  step?: string;
  /**
   * This action undoes another (saga). A permanent failure then waits in needs_review for a person
   * instead of failing, because nothing may try a second, different undo on its own.
   */
  compensation?: boolean;
  /**
   * Return as soon as the action is unknown or in needs_review instead of waiting for its outcome, so an
   * agent can re-read and re-plan. Its other steps must still wait (see `unresolved`).
   */
  returnWhenUnresolved?: boolean;
}

export type { CompensationResult } from '../messages/run';

/** Statuses that mean "may or may not have happened, nobody knows yet". */
export const UNRESOLVED_STATUSES = [
  'planned',
  'awaiting_confirmation',
  'dispatching',
  'unknown',
  'needs_review',
] as const;

interface Registered {
  forKey: string;
  prepared: PreparedAction;
}

/**
 * A run's actions, from workflow code: `act` claims the step's keyed action and waits for its outcome, steps wait while
 * an upstream effect is unresolved, and registered compensations run newest first with their own keys. Construct it
 * first in the run's workflow.
 */
export class ActionRun {
  readonly runId: string;
  readonly tenant: string;
  readonly eventId: string;
  private stageName = 'starting';
  private readonly actions = new Map<string, ActionSnapshot>();
  /** Per step: the keys of its revisions, oldest first, with their request hashes (the persisted intents). */
  private readonly steps = new Map<string, Array<{ key: string; requestHash: string }>>();
  /** Keys of re-planned actions an operator allowed to run despite an unresolved or confirmed predecessor. */
  private readonly acceptedRisks = new Map<string, RiskAcceptance>();
  /** Re-planned actions waiting for their predecessor or an operator's signed acceptance: key → request hash. */
  private readonly pendingReplans = new Map<string, string>();
  /** The run's one gate for signed decisions (accept-risk here; a run's own commands, e.g. the agent run's). */
  readonly decisions: DecisionGate;
  private readonly compensations: Registered[] = [];
  /** Actions this run settled on their ledger row (no action workflow): the holder its settlement writes as. */
  private readonly rowHolders = new Map<string, string>();
  private waiting: string | undefined;

  private readonly prepareActivities = proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    retry: CLAIM_RETRY,
    summary: 'prepare action',
  });

  /**
   * The prelude every run shares: its workflow ID must be `run:<tenant>:<eventId>[:<agent>]` (so every
   * restart and every second start lands on the same actions); its status query, risk acceptance and
   * the action notifications are installed; it is findable in the Web UI as a run of its tenant.
   */
  constructor(
    identity: { tenant: string; eventId: string; agent?: string },
    private readonly describe: (stage: string) => string = (s) => s,
  ) {
    const expected = runWorkflowId(identity.tenant, identity.eventId, identity.agent);
    if (workflowInfo().workflowId !== expected) {
      throw ApplicationFailure.nonRetryable(
        `a run for ${identity.tenant}/${identity.eventId} must run as ${expected}, not ${workflowInfo().workflowId}`,
        'InvalidIntent',
      );
    }
    this.runId = expected;
    this.decisions = new DecisionGate(`run ${expected}`, identity.tenant);
    this.decisions.acceptRefreshes();
    this.tenant = identity.tenant;
    this.eventId = identity.eventId;
    setHandler(runStatusQuery, () => ({
      stage: this.stageName,
      waitingOn: this.waiting,
      actions: this.known().map(({ key, status, summary, providerRef }) => ({ key, status, summary, providerRef })),
    }));
    setHandler(actionUpdateSignal, (snap) => this.remember(snap));
    setHandler(
      acceptRiskUpdate,
      (signed) => {
        this.decisions.taken(signed.claims);
        const { reason } = paramsOf(signed.claims, 'accept-risk');
        this.acceptedRisks.set(signed.claims.key, { key: signed.claims.key, operator: signed.claims.operator, reason });
        return { accepted: signed.claims.key };
      },
      {
        // The envelope names the re-planned action by its key and binds its exact request hash.
        validator: (signed) => {
          const key = (signed as { claims?: { key?: unknown } } | undefined)?.claims?.key;
          const pending = typeof key === 'string' ? this.pendingReplans.get(key) : undefined;
          if (pending === undefined) {
            throw new RetrysafeError('InvalidIntent', `no re-planned action ${String(key)} is waiting in this run`, {
              field: 'claims.key',
            }).toFailure();
          }
          paramsOf(
            this.decisions.verify(signed, {
              decisions: ['accept-risk'],
              key: key as string,
              tenant: this.tenant,
              requestHash: pending,
            }),
            'accept-risk',
          );
        },
      },
    );
    // RetrysafeClient sets these when it starts the run; a run started otherwise gets them here. An upsert is an
    // event and a write to the server's visibility store, so only what the start left out or set otherwise is sent.
    const atStart = workflowInfo().typedSearchAttributes;
    const findable = [
      { key: SA_KIND, value: 'run' },
      { key: SA_TENANT, value: identity.tenant },
      { key: SA_STATUS, value: 'running' },
    ].filter(({ key, value }) => atStart.get(key) !== value);
    if (findable.length) upsertSearchAttributes(findable);
  }

  get stage(): string {
    return this.stageName;
  }

  /** Names the run's stage in its status query, its RetrysafeStatus and the Web UI's details line. */
  setStage(stage: string, searchable = stage): void {
    this.stageName = stage;
    setCurrentDetails(`**${stage}** · ${this.describe(stage)}`);
    upsertSearchAttributes([{ key: SA_STATUS, value: searchable }]);
  }

  /** The run's actions, by key, with their latest known status. */
  known(): ActionSnapshot[] {
    return [...this.actions.values()];
  }

  /** The snapshot of one of this run's actions by its key, as last reported. */
  find(key: string): ActionSnapshot | undefined {
    return this.actions.get(key);
  }

  /** The run's actions whose outcome is not known yet; a downstream step must wait for them. */
  unresolved(): ActionSnapshot[] {
    return this.known().filter((a) => (UNRESOLVED_STATUSES as readonly string[]).includes(a.status));
  }

  get waitingOn(): string | undefined {
    return this.waiting;
  }

  /** Re-planned actions waiting for their predecessor or an operator's acceptance. */
  pendingReplanKeys(): string[] {
    return [...this.pendingReplans.keys()];
  }

  /** Validates, normalizes and hashes an intent with the worker's registry; recorded, so it replays. */
  async prepare(intent: Intent): Promise<PreparedAction> {
    try {
      return await this.prepareActivities.prepareAction({ intent, tenant: this.tenant });
    } catch (err) {
      throw unwrap(err);
    }
  }

  /** The key a prepared intent gets at a step of this run. */
  keyFor(prepared: Pick<PreparedAction, 'tool'>, step?: string): string {
    const stepId = step === undefined || step === prepared.tool.name ? undefined : step;
    return actionKeyForStep(this.runId, { operation: prepared.tool.name, version: prepared.tool.version, stepId });
  }

  /**
   * Takes the action `tool` performs with `input` and resolves with its snapshot once it reaches an outcome
   * (confirmed, failed, compensating or compensated). `tool` is a {@link toolRefs} ref (or the `defineTool` value
   * where its module is workflow-safe); `input` is type-checked against the tool's input schema. Invalid input and
   * mismatches fail the run with a typed, non-retryable failure.
   */
  act<T extends AnyTool>(
    tool: ToolRef<T> | T,
    input: z.input<T['input']>,
    options: ActOptions = {},
  ): Promise<ActionSnapshot> {
    return this.actIntent({ ...(input as Record<string, unknown>), operation: tool.name }, options);
  }

  /**
   * The untyped form, for a tool chosen at run time (agent runs, MCP, compensations): claims the action for
   * `intent` (`{ operation, ...input }`, validated by the worker's registry) as {@link ActionRun.act} does.
   */
  async actIntent(intent: Intent, options: ActOptions = {}, prepared?: PreparedAction): Promise<ActionSnapshot> {
    // The common case prepares and acts in one local activity; it leaves a re-plan, a long call, an undo and an act
    // that ended without a verdict to the steps below.
    const fast = prepared || options.compensation ? undefined : await this.prepareAndAct(intent, options);
    const p = prepared ?? fast?.prepared ?? (await this.prepare(intent));
    const step = options.step ?? p.tool.name;
    const revisions = this.steps.get(step) ?? [];
    const at = keyAtStep(this.runId, p.tool, step, revisions, p.requestHash);
    const { key } = at;
    if (fast?.acted && fast.acted.key !== key) {
      throw ApplicationFailure.nonRetryable(`the act keyed ${fast.acted.key}, the run ${key}`, 'KeyDerivationMismatch');
    }
    if (!at.revisionOf) {
      this.steps.set(step, [...revisions, { key, requestHash: p.requestHash }]);
      if (at.replans) await this.guardReplan(at.replans.key, key, p.requestHash);
    }
    if (p.tool.compensationTool && !options.compensation && !this.compensations.some((c) => c.forKey === key)) {
      this.compensations.push({ forKey: key, prepared: p });
    }
    const self = workflowInfo().workflowId;
    upsertSearchAttributes([
      { key: SA_ACTION_KEYS, value: actionKeysWithinLimit([...new Set([...this.actions.keys(), key])]) },
    ]);
    const action = {
      key,
      intent: p.intent,
      requestHash: p.requestHash,
      tenant: this.tenant,
      owner: self,
      ...(options.compensation ? { compensation: true } : {}),
    };
    const claim = { requestHash: p.requestHash, claimant: self, notify: self };
    // The run acts on the action's ledger row itself; an undo is claimed for its action workflow, which decides
    // with a person when it fails (nothing may try a second, different undo on its own).
    const claimed = fast?.acted
      ? await this.followVerdict(action, claim, p, fast.acted.verdict)
      : options.compensation
        ? await this.claimOnly(action, claim, p.summary)
        : await this.actOnRecord(action, claim, p);
    this.remember(claimed);
    const settled = () => {
      const status = this.actions.get(key)!.status;
      return (
        OUTCOME_STATUSES.includes(status) ||
        (options.returnWhenUnresolved === true && (status === 'unknown' || status === 'needs_review'))
      );
    };
    if (!settled()) await this.waitVisibly(key, settled);
    return this.actions.get(key)!;
  }

  /**
   * The record first: the run's act takes the action's ledger row, sends with the key and settles the row, and no
   * action workflow starts. It runs as a local activity in the run's own workflow task, or as an activity with
   * heartbeats for a tool whose calls run long. When someone must decide or wait (a person's confirmation, an unknown
   * outcome, another holder) its verdict is a handover: the run claims the action workflow and waits for its
   * notifications.
   */
  private async actOnRecord(action: ActionInput, claim: ClaimRequest, p: PreparedAction): Promise<ActionSnapshot> {
    const { actOnRecord } = p.tool.longCalls
      ? proxyActivities<Activities>({ ...SENDING_ACTIVITY, summary: `act ${action.key}: ${p.summary}` })
      : proxyLocalActivities<Activities>({ ...LOCAL_ACT, summary: `act ${action.key}: ${p.summary}` });
    let verdict: ActOnRecordResult;
    try {
      // The token comes from the run's seeded randomness: the act run again with this task after a crash carries it
      // too, and so may take the row from its dead predecessor (an earlier generation) at once.
      verdict = await actOnRecord({ action, token: uuid4(), generation: workflowInfo().historyLength });
    } catch (err) {
      if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
        throw unwrap(err);
      }
      // The act gave up without a verdict: the action workflow takes the row over once its lease ends, and
      // reconciles (a request may have reached the provider). The run claims it and waits for its outcome.
      log.warn('acting on the record ended without a verdict; the action workflow takes over', {
        key: action.key,
        error: (err as Error).message,
      });
      return this.claimOnly(action, claim, p.summary);
    }
    return this.followVerdict(action, claim, p, verdict);
  }

  /** The act's verdict: its outcome (and the holder that settled the row), or the action workflow claimed. */
  private async followVerdict(
    action: ActionInput,
    claim: ClaimRequest,
    p: PreparedAction,
    verdict: ActOnRecordResult,
  ): Promise<ActionSnapshot> {
    if ('handOver' in verdict) return this.claimOnly(action, claim, p.summary);
    if (verdict.holder) this.rowHolders.set(action.key, verdict.holder);
    return verdict.snapshot;
  }

  /**
   * Prepares the intent and acts on it in one local activity: the act derives the key as the run does (`keyAtStep`), from
   * the step's revisions the run passes it. It prepares without acting for a tool with long calls (its act is an
   * activity) and for a re-plan (the run first waits for the step's previous action); and when it fails without a
   * verdict, the run prepares apart and acts again (a new token: the row's holder hands the action over).
   */
  private async prepareAndAct(
    intent: Intent,
    options: ActOptions,
  ): Promise<{ prepared: PreparedAction; acted?: { key: string; verdict: ActOnRecordResult } } | undefined> {
    const step = options.step ?? String(intent.operation);
    const { prepareAndAct } = proxyLocalActivities<Activities>({ ...LOCAL_ACT, summary: `act ${step}` });
    try {
      const result = await prepareAndAct({
        intent,
        tenant: this.tenant,
        runId: this.runId,
        ...(options.step ? { step: options.step } : {}),
        revisions: { [step]: this.steps.get(step) ?? [] },
        owner: workflowInfo().workflowId,
        token: uuid4(),
        generation: workflowInfo().historyLength,
      });
      return result;
    } catch (err) {
      if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
        throw unwrap(err);
      }
      log.warn('preparing and acting ended without a verdict; the run acts again, apart', {
        step,
        error: (err as Error).message,
      });
      return undefined;
    }
  }

  /**
   * The claim alone, as an activity that heartbeats while the action workflow answers (it leaves the run's workflow
   * task slot free meanwhile): every undo, and a run's act that ended without a verdict.
   */
  private async claimOnly(action: ActionInput, claim: ClaimRequest, summary: string): Promise<ActionSnapshot> {
    const { claimAction } = proxyActivities<Activities>({
      startToCloseTimeout: CLAIM_START_TO_CLOSE,
      heartbeatTimeout: CLAIM_HEARTBEAT_TIMEOUT,
      retry: CLAIM_RETRY,
      summary: `claim ${action.key}: ${summary}`,
    });
    try {
      return await claimAction({ action, claim });
    } catch (err) {
      throw unwrap(err);
    }
  }

  /** Like `act`, but an action that ends other than confirmed fails the run with a typed, non-retryable failure. */
  async actOrThrow(intent: Intent, options: ActOptions = {}): Promise<ActionSnapshot> {
    const snap = await this.actIntent(intent, options);
    if (snap.status !== 'confirmed') {
      throw ApplicationFailure.create({
        type: snap.error?.code ?? 'BusinessRejected',
        message: `${snap.key} ${snap.status}: ${snap.error?.message ?? 'no detail'}`,
        nonRetryable: true,
        details: [{ key: snap.key, status: snap.status }],
      });
    }
    return snap;
  }

  /**
   * Waits, durably, until an upstream action owned by another run reaches an outcome. The wait is visible
   * as this run's RetrysafeWaitingOn search attribute and in its status query. Never claims the action.
   */
  async awaitUpstream(key: string): Promise<ActionSnapshot> {
    const { watchAction } = proxyActivities<Activities>({
      startToCloseTimeout: CLAIM_START_TO_CLOSE,
      // The upstream run may not have claimed its action yet: keep asking, slowly, for up to a day.
      scheduleToCloseTimeout: '24h',
      retry: { initialInterval: '1s', maximumInterval: '30s' },
      summary: `wait for ${key}`,
    });
    this.setWaiting(key);
    this.remember(await watchAction({ key, watcher: workflowInfo().workflowId }));
    await condition(() => OUTCOME_STATUSES.includes(this.actions.get(key)!.status));
    this.setWaiting(undefined);
    return this.actions.get(key)!;
  }

  /** Whether this run owns the action (it claimed it first), and so decides on its compensation. */
  owns(key: string): boolean {
    const known = this.actions.get(key);
    return !known || known.owner === workflowInfo().workflowId;
  }

  /**
   * Tells a confirmed, compensatable action what became of it. Only the action's owner settles it: another
   * agent that proposed the same action shares its outcome but does not decide whether it is kept or undone.
   * An action that already closed (settled, or past its compensation window) needs no word from anyone.
   */
  async settle(key: string, settlement: Omit<Settlement, 'by'>): Promise<void> {
    if (!this.owns(key)) return;
    const self = workflowInfo().workflowId;
    const holder = this.rowHolders.get(key);
    if (holder) {
      // Settled on its row by this run's act: there is no action workflow to tell; the row records the undo.
      if (settlement.state === 'kept') return;
      const snap = await this.prepareActivities.settleRecord({
        key,
        tenant: this.tenant,
        holder,
        by: self,
        ...settlement,
      });
      if (snap) this.remember(snap);
      return;
    }
    try {
      await getExternalWorkflowHandle(key).signal(settleSignal, { by: self, ...settlement });
    } catch (err) {
      if (
        (err as { type?: string }).type === 'ExternalWorkflowExecutionNotFound' ||
        /not found/i.test((err as Error).message)
      )
        return;
      throw err;
    }
  }

  /** Tells every kept, compensatable action that the run finished with it (it may close). */
  async keepAll(): Promise<void> {
    for (const c of this.compensations) {
      if (this.actions.get(c.forKey)?.status === 'confirmed') await this.settle(c.forKey, { state: 'kept' });
    }
  }

  /** Runs the registered compensations newest first, each exactly once per key. */
  async compensate(): Promise<CompensationResult[]> {
    const results: CompensationResult[] = [];
    for (const c of [...this.compensations].reverse()) {
      const step = this.actions.get(c.forKey);
      if (!this.owns(c.forKey)) {
        // Another run owns this action: it decides on the undo. Two undos of one charge are two refunds.
        results.push({ forKey: c.forKey, status: 'left-to-owner' });
        continue;
      }
      if (step?.status === 'failed') {
        results.push({ forKey: c.forKey, status: 'nothing-to-undo' });
        continue;
      }
      const done = step?.providerRef
        ? { providerRef: step.providerRef, result: step.record ?? null }
        : await this.lookUp(c.forKey, c.prepared);
      const undo = done
        ? await this.prepareActivities.deriveCompensation({ intent: c.prepared.intent, ...done })
        : null;
      if (!undo) {
        results.push({ forKey: c.forKey, status: 'nothing-to-undo' });
        if (step?.status === 'confirmed') await this.settle(c.forKey, { state: 'kept' });
        continue;
      }
      log.info('compensating', { forKey: c.forKey, operation: undo.tool.name });
      if (step) await this.settle(c.forKey, { state: 'compensating' });
      // The undo's step follows the key it undoes: charge:v1:t:e → refund:v1:t:e, …:e:charge-r2 → refund:v1:t:e:charge-r2-undo.
      const ownStep = parseActionKey(c.forKey).stepId;
      const undoStep = ownStep === undefined ? undo.tool.name : `${ownStep}-undo`;
      const undone = await this.actIntent(undo.intent, { compensation: true, step: undoStep }, undo);
      const ok = undone.status === 'confirmed';
      if (step)
        await this.settle(c.forKey, { state: ok ? 'compensated' : 'compensation-failed', compensationKey: undone.key });
      results.push({ forKey: c.forKey, compensationKey: undone.key, status: ok ? 'compensated' : 'needs_review' });
    }
    return results;
  }

  /**
   * Asks the provider whether an action's effect exists, after the contract's read lag, for compensations
   * of steps whose outcome the run never learned. Undefined when the tool has no lookup or nothing is there.
   */
  private async lookUp(
    key: string,
    prepared: PreparedAction,
  ): Promise<{ providerRef: string; result: Json | null } | undefined> {
    if (!prepared.tool.hasLookup) return undefined;
    const { lookupAction } = proxyActivities<Activities>({
      startToCloseTimeout: READ_START_TO_CLOSE,
      summary: `look up ${key}`,
    });
    await sleep(prepared.tool.readAfterWriteLagMs);
    const found = await lookupAction({ key, intent: prepared.intent, requestHash: prepared.requestHash });
    return found.found && found.providerRef
      ? { providerRef: found.providerRef, result: found.record ?? null }
      : undefined;
  }

  /**
   * A re-plan produced a materially different intent for a step that already has an action. The new
   * action has its own key; it may run only once the previous one is known not to have happened
   * (failed or compensated), or when an authorized operator accepts the risk of a second effect.
   */
  private async guardReplan(previousKey: string, newKey: string, newHash: string): Promise<void> {
    const safe = () => ['failed', 'compensated'].includes(this.actions.get(previousKey)?.status ?? '');
    if (safe()) return;
    // Only a signed acceptance lets it through: load what this worker trusts to check one.
    await this.decisions.load();
    this.pendingReplans.set(newKey, newHash);
    await this.decisions.during(() => this.waitVisibly(previousKey, () => safe() || this.acceptedRisks.has(newKey)));
    this.pendingReplans.delete(newKey);
  }

  private async waitVisibly(key: string, done: () => boolean): Promise<void> {
    this.setWaiting(key);
    await condition(done);
    this.setWaiting(undefined);
  }

  private setWaiting(key: string | undefined): void {
    this.waiting = key;
    upsertSearchAttributes([{ key: SA_WAITING_ON, value: key ?? null }]);
  }

  private remember(snap: ActionSnapshot): void {
    const known = this.actions.get(snap.key);
    // Snapshots only grow their audit trail; an older one arriving late must not win.
    if (!known || snap.audit.length >= known.audit.length) this.actions.set(snap.key, snap);
  }
}

/** A local activity's typed failure leaves as the ApplicationFailure itself, so the run fails with its type. */
function unwrap(err: unknown): unknown {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : err;
}

/** A serializable reference to a tool, typed by it: what {@link toolRefs} gives workflow code. */
export interface ToolRef<T extends AnyTool = AnyTool> {
  readonly name: T['name'];
  /** Type only: carries the tool's type; never set. */
  readonly __tool?: T;
}

/** Refs keyed by tool name, from a tool list, a union of tools or a record of tools. */
export type ToolRefs<Tools> = [Tools] extends [readonly AnyTool[]]
  ? { readonly [N in Tools[number]['name']]: ToolRef<Extract<Tools[number], { name: N }>> }
  : [Tools] extends [AnyTool]
    ? { readonly [N in Tools['name']]: ToolRef<Extract<Tools, { name: N }>> }
    : {
        readonly [K in keyof Tools as Tools[K] extends AnyTool ? Tools[K]['name'] : never]: Tools[K] extends AnyTool
          ? ToolRef<Tools[K]>
          : never;
      };

/**
 * Typed refs to tools for workflow code, as `proxyActivities<typeof activities>()` does for activities: import
 * the tools with `import type` (tool modules load provider SDKs the workflow bundle refuses) and write
 * `const tools = toolRefs<typeof myTools>()`; `run.act(tools.charge, { amountCents: 100, ... })` is then checked
 * against the charge tool's input. A ref is `{ name }` and nothing more.
 */
export function toolRefs<Tools>(): ToolRefs<Tools> {
  return new Proxy({} as ToolRefs<Tools>, {
    get: (_target, name) => (typeof name === 'string' ? Object.freeze({ name }) : undefined),
  });
}
