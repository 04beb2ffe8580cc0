/**
 * What one agent run knows (ceilings, usage, recorded decisions, the planner's view of its actions, its stage) and
 * the operator commands that change it: signed decisions on the run (target = run ID, no request hash), checked in
 * their validators against the keys and operator scopes loaded when the run pauses, so a refused one never enters
 * history. The run's loop (workflows/agent-run.ts) reads it and changes it only through these methods.
 */
import { condition, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  checkCeilings,
  raiseCeiling,
  resolveRunCeilings,
  type CeilingVerdict,
  type NextStep,
  type RaisableCeiling,
  type RunCeilings,
  type RunUsage,
} from '../../policies/ceilings';
import type { PlannerHistoryEntry } from '../../policies/planner-contract';
import type { SignedDecision } from '../../policies/signed-decision';
import { RetrysafeError } from '../../policies/errors';
import { SA_STATUS } from '../../policies/search-attributes';
import {
  agentRunStatusQuery,
  cancelRunUpdate,
  raiseCeilingUpdate,
  resumeRunUpdate,
  type AgentRunInput,
  type AgentRunResult,
  type CompensationResult,
  type DecisionRecord,
} from '../../messages/run';
import type { ActionSnapshot } from '../../messages/action';
import type { ActionRun } from '../action-run';
import { paramsOf } from '../signed-decisions';
import { countCeilingHit } from '../workflow-metrics';

type OperatorCommand = { kind: 'resume' | 'cancel' | 'raise'; by: string; reason: string };

export class AgentState {
  private ceilings: RunCeilings;
  private readonly usage: RunUsage = { steps: 0, spendCents: 0, tokens: 0, sideEffects: 0, startedAtMs: Date.now() };
  private readonly decisions: DecisionRecord[] = [];
  /** The planner's view of the run's actions, in the order they were first taken. */
  private readonly history: PlannerHistoryEntry[] = [];
  private stage = 'planning';
  private pausedFor: string | undefined;
  private command: OperatorCommand | undefined;

  constructor(
    private readonly input: AgentRunInput,
    private readonly run: ActionRun,
  ) {
    this.ceilings = resolveRunCeilings(input.ceilings);
    setHandler(agentRunStatusQuery, () => ({
      stage: this.stage,
      pausedFor: this.pausedFor,
      waitingOn: run.waitingOn,
      pendingReplans: run.pendingReplanKeys(),
      usage: { ...this.usage },
      ceilings: this.ceilings,
      decisions: [...this.decisions],
    }));
    this.installOperatorCommands();
  }

  /** The actions as the planner sees them, each with its latest status. */
  actions(): PlannerHistoryEntry[] {
    return this.history.map((h) => ({ ...h, status: this.run.find(h.key)?.status ?? h.status }));
  }

  /** Whether an action of this operation was taken before (a re-plan of its step). */
  tookBefore(operation: string): boolean {
    return this.history.some((h) => h.operation === operation);
  }

  setStage(stage: string): void {
    this.stage = stage;
  }

  /** One planner answer: a step, its tokens, the decision as recorded (never the prompt or the raw output). */
  planned(decision: DecisionRecord, tokens: number): void {
    this.usage.steps += 1;
    this.usage.tokens += tokens;
    this.decisions.push(decision);
  }

  /** An effect is about to be claimed: counted against the side-effect and (money moved) spend ceilings. */
  effectTaken(amountCents: number | undefined, movesMoney: boolean): void {
    this.usage.sideEffects += 1;
    if (movesMoney && amountCents !== undefined) this.usage.spendCents += amountCents;
  }

  /** The action's outcome as the planner will see it next time. */
  acted(snap: ActionSnapshot, operation: string): void {
    const entry: PlannerHistoryEntry = {
      key: snap.key,
      operation,
      status: snap.status,
      ...(snap.providerRef ? { providerRef: snap.providerRef } : {}),
    };
    const existing = this.history.findIndex((h) => h.key === snap.key);
    if (existing >= 0) this.history[existing] = entry;
    else this.history.push(entry);
  }

  /** Waits, paused at each ceiling the next step would pass, until it is within them; false when cancelled. */
  async withinCeilings(next: NextStep): Promise<boolean> {
    for (;;) {
      const verdict = checkCeilings(this.usage, this.ceilings, Date.now(), next);
      if (verdict.ok) return true;
      if ((await this.pauseAtCeiling(verdict)) === 'cancel') return false;
    }
  }

  /** Pauses in needs_review until an operator raises a limit, resumes or cancels. */
  async pause(reason: string): Promise<'resume' | 'cancel'> {
    await this.run.decisions.load();
    this.pausedFor = reason;
    this.stage = 'needs_review';
    this.command = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: 'needs_review' }]);
    await this.run.decisions.during(() => condition(() => this.command !== undefined));
    const command = this.command!;
    this.pausedFor = undefined;
    upsertSearchAttributes([{ key: SA_STATUS, value: command.kind === 'cancel' ? 'cancelled' : 'running' }]);
    return command.kind === 'cancel' ? 'cancel' : 'resume';
  }

  /** The run's result; a cancelled run compensates what it kept first. */
  async end(
    status: AgentRunResult['status'],
    reason: string,
    compensations?: CompensationResult[],
  ): Promise<AgentRunResult> {
    const undone = status === 'cancelled' ? await this.run.compensate() : compensations;
    this.stage = status;
    upsertSearchAttributes([{ key: SA_STATUS, value: status }]);
    const { decisions, usage } = this;
    return { status, reason, actions: this.actions(), decisions, usage, ...(undone ? { compensations: undone } : {}) };
  }

  /** Pauses in needs_review at the ceiling the verdict names, counting it (retrysafe_ceilings_hit_total). */
  private pauseAtCeiling(verdict: Extract<CeilingVerdict, { ok: false }>): Promise<'resume' | 'cancel'> {
    countCeilingHit(verdict.ceiling);
    return this.pause(
      `${verdict.ceiling} ceiling reached (${verdict.value} > ${verdict.limit}): ${verdict.message}; ` +
        `raise '${verdict.raise}' to continue`,
    );
  }

  private installOperatorCommands(): void {
    const gate = this.run.decisions;
    const raise = (signed: SignedDecision) => {
      const p = paramsOf(signed.claims, 'raise-ceiling');
      const change = { ceiling: p.ceiling as RaisableCeiling, newLimit: p.newLimit };
      return { ceilings: raiseCeiling(this.ceilings, change, signed.claims.operator), reason: p.reason };
    };
    setHandler(
      raiseCeilingUpdate,
      (signed) => {
        gate.taken(signed.claims);
        const raised = raise(signed);
        this.ceilings = raised.ceilings;
        this.command = { kind: 'raise', by: signed.claims.operator, reason: raised.reason };
        return this.ceilings;
      },
      // The raise itself must be legal (a known ceiling, not lower than now) before it is accepted.
      { validator: (signed) => void this.checked(signed, 'raise-ceiling', () => raise(signed)) },
    );
    for (const [update, kind] of [
      [resumeRunUpdate, 'resume'],
      [cancelRunUpdate, 'cancel'],
    ] as const) {
      setHandler(
        update,
        (signed) => {
          gate.taken(signed.claims);
          this.command = { kind, by: signed.claims.operator, reason: paramsOf(signed.claims, kind).reason };
          return kind === 'resume' ? 'resumed' : 'cancelled';
        },
        { validator: (signed) => void this.checked(signed, kind) },
      );
    }
  }

  /** A command is taken only while the run is paused, signed for this run by a trusted, scoped operator. */
  private checked(signed: SignedDecision, decision: 'raise-ceiling' | 'resume' | 'cancel', legal?: () => unknown) {
    const runId = this.run.runId;
    if (!this.pausedFor) throw new RetrysafeError('IllegalTransition', `run ${runId} is not paused`, {}).toFailure();
    const claims = this.run.decisions.verify(signed, { decisions: [decision], key: runId, tenant: this.input.tenant });
    paramsOf(claims, decision);
    try {
      legal?.();
    } catch (err) {
      if (err instanceof RetrysafeError) throw err.toFailure();
      throw err;
    }
  }
}
