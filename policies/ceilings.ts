import type { z } from 'zod';
import { builtOnFirstUse, loadZod } from './built-on-first-use';
import { RetrysafeError } from './errors';
import type { Expect, Same } from './same-type';
import { firstIssue } from './zod-issues';
import type { ToolDescriptor } from './tool';

/**
 * Run ceilings: hard budgets an agent run carries in its own state, so a looping planner, a runaway
 * refund loop or a run that outlived its purpose stops in needs_review instead of spending on. A
 * ceiling is an inclusive maximum of what the run may consume: `checkCeilings` asks whether taking
 * the next step would go past one, so a run trips exactly when its usage would exceed the limit.
 *
 * Everything here is pure and deterministic: workflows pass in the workflow clock (`Date.now()` inside
 * a workflow is replay-safe) and persist both ceilings and usage in their own state.
 */

/** The schemas of ceilings and usage, built on first use (built-on-first-use.ts). */
function buildCeilingSchemas() {
  const z = loadZod();
  const positiveInt = z
    .number({ error: 'must be a positive integer' })
    .int({ error: 'must be a positive integer' })
    .positive({ error: 'must be a positive integer' });

  /** Limits on one money-moving action: a default for every such tool, and per-tool overrides by name. */
  const PerActionCeilings = z.strictObject({
    maxAmountCents: positiveInt,
    byTool: z.record(z.string().min(1), positiveInt),
  });

  /** A run's hard limits (RunCeilings, below). */
  const RunCeilings = z.strictObject({
    maxSteps: positiveInt,
    /** Wall-clock budget measured from the run's start. */
    deadlineMs: positiveInt,
    /** Money moved by the run's money-movement actions (charges and refunds both count), in minor units. */
    maxSpendCents: positiveInt,
    /** Model tokens (prompt + completion) across every planner call of the run. */
    maxTokens: positiveInt,
    maxSideEffects: positiveInt,
    perAction: PerActionCeilings,
  });

  /** Partial overrides, as a tenant's policy file gives them; per-action limits may be overridden one by one. */
  const RunCeilingOverrides = z.strictObject({
    maxSteps: positiveInt.optional(),
    deadlineMs: positiveInt.optional(),
    maxSpendCents: positiveInt.optional(),
    maxTokens: positiveInt.optional(),
    maxSideEffects: positiveInt.optional(),
    perAction: PerActionCeilings.partial().optional(),
  });

  /** What a run has consumed so far; persisted in the run's state next to its ceilings. */
  const RunUsage = z.strictObject({
    steps: z.number().int().nonnegative(),
    spendCents: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
    sideEffects: z.number().int().nonnegative(),
    startedAtMs: z.number().int().nonnegative(),
  });
  return { PerActionCeilings, RunCeilings, RunCeilingOverrides, RunUsage };
}

/** The schemas of this module: per-action and run ceilings, a tenant's overrides, a run's usage. */
export const ceilingSchemas = builtOnFirstUse(buildCeilingSchemas);
type CeilingSchemas = ReturnType<typeof ceilingSchemas>;

/**
 * A run's hard limits: steps, deadline, spend, side effects, tokens and per-action limits. Reaching one pauses the run
 * in `needs_review`. Every limit is a positive integer.
 */
export interface RunCeilings {
  /** Steps (reads, plans, actions) the run may take. */
  maxSteps: number;
  /** Wall-clock budget measured from the run's start. */
  deadlineMs: number;
  /** Money moved by the run's money-movement actions (charges and refunds both count), in minor units. */
  maxSpendCents: number;
  /** Model tokens (prompt + completion) across every planner call of the run. */
  maxTokens: number;
  /** Side-effecting actions the run may take. */
  maxSideEffects: number;
  /** Limits on one money-moving action: a default for every such tool, and per-tool overrides by name. */
  perAction: {
    maxAmountCents: number;
    /** Tool name → its own limit, in minor units. */
    byTool: Record<string, number>;
  };
}
/** Limits on one money-moving action (RunCeilings.perAction). */
export type PerActionCeilings = RunCeilings['perAction'];
/**
 * Partial overrides, as a tenant's policy file gives them: each field, when given, replaces RunCeilings' field of the
 * same name; per-action limits may be overridden one by one.
 */
export interface RunCeilingOverrides {
  maxSteps?: number | undefined;
  deadlineMs?: number | undefined;
  maxSpendCents?: number | undefined;
  maxTokens?: number | undefined;
  maxSideEffects?: number | undefined;
  perAction?: { maxAmountCents?: number | undefined; byTool?: Record<string, number> | undefined } | undefined;
}
/** What a run has consumed so far; persisted in the run's state next to its ceilings. */
export interface RunUsage {
  /** Steps taken. */
  steps: number;
  /** Money moved, in minor units. */
  spendCents: number;
  /** Model tokens used. */
  tokens: number;
  /** Side-effecting actions taken. */
  sideEffects: number;
  /** When the run started, by the workflow clock (ms since the epoch). */
  startedAtMs: number;
}

/** The interfaces above are what the schemas parse to: a change to either side that makes them differ fails here. */
export type _CeilingTypesMatchSchemas = [
  Expect<Same<PerActionCeilings, z.output<CeilingSchemas['PerActionCeilings']>>>,
  Expect<Same<RunCeilings, z.output<CeilingSchemas['RunCeilings']>>>,
  Expect<Same<RunCeilingOverrides, z.output<CeilingSchemas['RunCeilingOverrides']>>>,
  Expect<Same<RunUsage, z.output<CeilingSchemas['RunUsage']>>>,
];

/** 50 steps: a business event needs a handful of reads, plans and actions; a run past 50 is looping. */
export const DEFAULT_MAX_STEPS = 50;
/** 24 h from the start: matches ESCALATION_WINDOW, so a run parked on a person is stopped, not left open for days. */
export const DEFAULT_DEADLINE_MS = 24 * 60 * 60 * 1000;
/** 200 000 cents: two actions at the human-only limit; no single business event should move more. */
export const DEFAULT_MAX_SPEND_CENTS = 200_000;
/** 200 000 tokens: dozens of planner calls with full context; past that the model is going in circles. */
export const DEFAULT_MAX_TOKENS = 200_000;
/** 20 side effects: a renewal needs about four (reserve, charge, ship, email); 20 leaves room for compensations. */
export const DEFAULT_MAX_SIDE_EFFECTS = 20;
/** 100 000 cents per money-moving action: equal to the human-only limit, so a run never moves more in one go. */
export const DEFAULT_MAX_ACTION_CENTS = 100_000;

/** The ceilings a run gets when neither its input nor its tenant's policy says otherwise. */
export const DEFAULT_RUN_CEILINGS: RunCeilings = Object.freeze({
  maxSteps: DEFAULT_MAX_STEPS,
  deadlineMs: DEFAULT_DEADLINE_MS,
  maxSpendCents: DEFAULT_MAX_SPEND_CENTS,
  maxTokens: DEFAULT_MAX_TOKENS,
  maxSideEffects: DEFAULT_MAX_SIDE_EFFECTS,
  perAction: Object.freeze({
    maxAmountCents: DEFAULT_MAX_ACTION_CENTS,
    byTool: Object.freeze({}) as Record<string, number>,
  }),
});

export type CeilingName = 'steps' | 'deadline' | 'spend' | 'tokens' | 'side-effects' | 'per-action';
/** What an operator raises: a run total, the default per-action limit, or one tool's (`per-action.refund`). */
export type RaisableCeiling = Exclude<CeilingName, 'per-action'> | 'per-action' | `per-action.${string}`;
export const RAISABLE_CEILINGS = [
  'steps',
  'deadline',
  'spend',
  'tokens',
  'side-effects',
  'per-action',
  'per-action.<tool>',
] as const;

function isRaisable(value: unknown): value is RaisableCeiling {
  if (typeof value !== 'string') return false;
  if (['steps', 'deadline', 'spend', 'tokens', 'side-effects', 'per-action'].includes(value)) return true;
  return /^per-action\.[a-z][a-z0-9-]{0,39}$/.test(value);
}

/** The step about to be taken: a planner call, a read/tool call, or an action with an external effect. */
export interface NextStep {
  kind: 'model' | 'tool' | 'effect';
  /** The action's contract, for an effect. */
  tool?: ToolDescriptor;
  /** The amount the effect moves, in minor units (read off its tool's amount field). */
  amountCents?: number;
  /** Estimated tokens of a model call; 0 when unknown (the call is still refused once the budget is spent). */
  tokens?: number;
}

export type CeilingVerdict =
  | { ok: true }
  | {
      ok: false;
      ceiling: CeilingName;
      /** The ceiling an operator would raise to let the run continue. */
      raise: RaisableCeiling;
      limit: number;
      value: number;
      message: string;
    };

/** Fills a partial override over a base (by default DEFAULT_RUN_CEILINGS) and validates the result. */
export function resolveRunCeilings(
  overrides: RunCeilingOverrides | undefined,
  base: RunCeilings = DEFAULT_RUN_CEILINGS,
): RunCeilings {
  const merged = {
    ...base,
    ...stripUndefined({ ...overrides, perAction: undefined }),
    perAction: {
      ...base.perAction,
      ...stripUndefined({ ...(overrides?.perAction ?? {}), byTool: undefined }),
      byTool: { ...base.perAction.byTool, ...(overrides?.perAction?.byTool ?? {}) },
    },
  };
  return parseRunCeilings(merged);
}

/** Validates ceilings from input or history; the error names the field. */
export function parseRunCeilings(raw: unknown): RunCeilings {
  const parsed = ceilingSchemas().RunCeilings.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, ['ceilings']);
    throw new RetrysafeError('InvalidIntent', `${field}: ${message}`, { field });
  }
  return parsed.data;
}

/**
 * Whether the run may take `next` (or, without `next`, whether it is still inside its ceilings at all).
 * The first ceiling that would be exceeded is reported; the deadline comes first because nothing may
 * happen after it, per-action limits before run totals because they say more about what to fix.
 */
export function checkCeilings(usage: RunUsage, ceilings: RunCeilings, nowMs: number, next?: NextStep): CeilingVerdict {
  const elapsed = nowMs - usage.startedAtMs;
  if (elapsed >= ceilings.deadlineMs) {
    return trip(
      'deadline',
      'deadline',
      ceilings.deadlineMs,
      elapsed,
      `the run is ${elapsed} ms old; its deadline is ${ceilings.deadlineMs} ms after start`,
    );
  }
  const steps = usage.steps + (next ? 1 : 0);
  if (steps > ceilings.maxSteps) {
    return trip(
      'steps',
      'steps',
      ceilings.maxSteps,
      steps,
      `step ${steps} would exceed the run's ${ceilings.maxSteps} steps`,
    );
  }
  if (next?.kind === 'model' && usage.tokens >= ceilings.maxTokens) {
    return trip(
      'tokens',
      'tokens',
      ceilings.maxTokens,
      usage.tokens,
      `the run has used ${usage.tokens} of ${ceilings.maxTokens} model tokens`,
    );
  }
  const tokens = usage.tokens + (next?.kind === 'model' ? Math.max(0, next.tokens ?? 0) : 0);
  if (tokens > ceilings.maxTokens) {
    return trip(
      'tokens',
      'tokens',
      ceilings.maxTokens,
      tokens,
      `${tokens} model tokens would exceed the run's ${ceilings.maxTokens}`,
    );
  }

  const effect = next?.kind === 'effect' ? next : undefined;
  const moves = effect?.tool?.riskClass === 'money-movement';
  const amount = moves ? Math.max(0, effect?.amountCents ?? 0) : 0;
  if (moves && effect?.tool) {
    const name = effect.tool.name;
    const limit = perActionLimit(ceilings, name);
    if (amount > limit) {
      return trip(
        'per-action',
        `per-action.${name}`,
        limit,
        amount,
        `a ${name} of ${amount} cents is above the per-action limit of ${limit}`,
      );
    }
  }
  const sideEffects = usage.sideEffects + (effect ? 1 : 0);
  if (sideEffects > ceilings.maxSideEffects) {
    return trip(
      'side-effects',
      'side-effects',
      ceilings.maxSideEffects,
      sideEffects,
      `side effect ${sideEffects} would exceed the run's ${ceilings.maxSideEffects}`,
    );
  }
  const spend = usage.spendCents + amount;
  if (spend > ceilings.maxSpendCents) {
    return trip(
      'spend',
      'spend',
      ceilings.maxSpendCents,
      spend,
      `moving ${amount} more cents would bring the run to ${spend}, above its ${ceilings.maxSpendCents}`,
    );
  }
  return { ok: true };
}

/** `checkCeilings`, throwing `CeilingReached` (with ceiling, limit and value in details) when a ceiling trips. */
export function assertWithinCeilings(usage: RunUsage, ceilings: RunCeilings, nowMs: number, next?: NextStep): void {
  const verdict = checkCeilings(usage, ceilings, nowMs, next);
  if (!verdict.ok) throw ceilingError(verdict);
}

export function ceilingError(verdict: Extract<CeilingVerdict, { ok: false }>): RetrysafeError {
  const { ceiling, raise, limit, value } = verdict;
  return new RetrysafeError('CeilingReached', `${verdict.message}; an operator can raise the ${raise} ceiling`, {
    ceiling,
    raise,
    limit,
    value,
  });
}

/**
 * An operator raises one ceiling of a stopped run. Raising to the current value is a no-op (a repeated
 * click must not fail); lowering is refused because this path only ever loosens a budget and cannot see
 * the run's usage, and non-positive or fractional limits are refused.
 */
export function raiseCeiling(
  ceilings: RunCeilings,
  change: { ceiling: RaisableCeiling; newLimit: number },
  operator: string,
): RunCeilings {
  if (typeof operator !== 'string' || operator.trim() === '') {
    throw new RetrysafeError('InvalidIntent', 'raising a ceiling needs the operator who decided it', {
      field: 'operator',
    });
  }
  if (!isRaisable(change.ceiling)) {
    throw new RetrysafeError(
      'InvalidIntent',
      `ceiling must be one of ${RAISABLE_CEILINGS.join(', ')}, got ${JSON.stringify(change.ceiling)}`,
      {
        field: 'ceiling',
      },
    );
  }
  if (!Number.isSafeInteger(change.newLimit) || change.newLimit <= 0) {
    throw new RetrysafeError(
      'InvalidIntent',
      `newLimit must be a positive integer, got ${JSON.stringify(change.newLimit)}`,
      {
        field: 'newLimit',
      },
    );
  }
  const current = limitOf(ceilings, change.ceiling);
  if (change.newLimit < current) {
    throw new RetrysafeError(
      'InvalidIntent',
      `${operator} asked to set the ${change.ceiling} ceiling to ${change.newLimit}, below its current ${current}; ` +
        'only raises are allowed here',
      { field: 'newLimit', ceiling: change.ceiling, current, newLimit: change.newLimit },
    );
  }
  const next: RunCeilings = {
    ...ceilings,
    perAction: { ...ceilings.perAction, byTool: { ...ceilings.perAction.byTool } },
  };
  if (change.ceiling.startsWith('per-action.')) {
    next.perAction.byTool[change.ceiling.slice('per-action.'.length)] = change.newLimit;
    return next;
  }
  switch (change.ceiling) {
    case 'steps':
      next.maxSteps = change.newLimit;
      break;
    case 'deadline':
      next.deadlineMs = change.newLimit;
      break;
    case 'spend':
      next.maxSpendCents = change.newLimit;
      break;
    case 'tokens':
      next.maxTokens = change.newLimit;
      break;
    case 'side-effects':
      next.maxSideEffects = change.newLimit;
      break;
    case 'per-action':
      next.perAction.maxAmountCents = change.newLimit;
      break;
  }
  return next;
}

/** The current limit of a raisable ceiling. */
export function limitOf(ceilings: RunCeilings, ceiling: RaisableCeiling): number {
  if (ceiling.startsWith('per-action.')) return perActionLimit(ceilings, ceiling.slice('per-action.'.length));
  switch (ceiling) {
    case 'steps':
      return ceilings.maxSteps;
    case 'deadline':
      return ceilings.deadlineMs;
    case 'spend':
      return ceilings.maxSpendCents;
    case 'tokens':
      return ceilings.maxTokens;
    case 'side-effects':
      return ceilings.maxSideEffects;
    case 'per-action':
      return ceilings.perAction.maxAmountCents;
    default:
      return ceilings.perAction.maxAmountCents;
  }
}

/** The per-action limit of one tool: its own override, or the default for every money-moving tool. */
export function perActionLimit(ceilings: RunCeilings, tool: string): number {
  return Object.prototype.hasOwnProperty.call(ceilings.perAction.byTool, tool)
    ? ceilings.perAction.byTool[tool]
    : ceilings.perAction.maxAmountCents;
}

function trip(
  ceiling: CeilingName,
  raise: RaisableCeiling,
  limit: number,
  value: number,
  message: string,
): Extract<CeilingVerdict, { ok: false }> {
  return { ok: false, ceiling, raise, limit, value, message };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
