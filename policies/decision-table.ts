import { RetrysafeError } from './errors';
import {
  DEFAULT_AUTO_APPROVE_BELOW_CENTS,
  DEFAULT_HUMAN_ONLY_ABOVE_CENTS,
  tenantPolicySchemas,
  type TenantPolicy,
} from './tenant-policy';
import type { Intent, RiskClass, ToolDescriptor } from './tool';
import { amountOf, checkToolLimits } from './tool-facts';
import { firstIssue } from './zod-issues';

/**
 * Where confirmation belongs, as data. Each row names a risk class (or every class), a condition on
 * the facts of one action, and the mode it demands; every row whose condition holds applies, and the
 * strictest mode wins. An action no row speaks for is human-only: the table fails closed.
 *
 *   automatic   run it now under its idempotency key
 *   confirm     build a dry run and wait for a signed human approval of that exact request
 *   human-only  the run stops in needs_review; a person acts or resolves it
 *
 * Pure and deterministic: it runs inside workflow code, so it reads nothing but its arguments.
 */

/** How an action may proceed: at once, after a person confirms its dry run, or only by a person. */
export type DecisionMode = 'automatic' | 'confirm' | 'human-only';
const STRICTNESS: Record<DecisionMode, number> = { automatic: 0, confirm: 1, 'human-only': 2 };

/** The thresholds a row may compare an amount with; a tenant's policy may override each. */
export type LimitName = 'autoApproveBelowCents' | 'humanOnlyAboveCents';

export type RowCondition =
  | { kind: 'always' }
  | { kind: 'ambiguous' }
  /** The tenant's policy lists this risk class among those that always need confirmation. */
  | { kind: 'tenant-confirms' }
  | { kind: 'amount-below'; limit: LimitName }
  | { kind: 'amount-at-least'; limit: LimitName }
  | { kind: 'amount-above'; limit: LimitName }
  /** The intent of a money-moving action carries no amount: nothing to compare with the limits. */
  | { kind: 'amount-missing' };

export interface DecisionRow {
  id: string;
  riskClass: RiskClass | 'any';
  when: RowCondition;
  mode: DecisionMode;
  /** Shown with the dry run and in the audit log. */
  because: string;
  /** The confirmation must show the exact request, field by field, not a summary. */
  exactPreview?: boolean;
}

export const DECISION_TABLE: readonly DecisionRow[] = [
  {
    id: 'read.automatic',
    riskClass: 'read',
    when: { kind: 'always' },
    mode: 'automatic',
    because: 'reading changes nothing',
  },

  {
    id: 'routine-message.automatic',
    riskClass: 'routine-message',
    when: { kind: 'always' },
    mode: 'automatic',
    because: 'routine internal work under a stable key',
  },
  {
    id: 'routine-message.ambiguous',
    riskClass: 'routine-message',
    when: { kind: 'ambiguous' },
    mode: 'confirm',
    because: 'the planner was unsure of the text or recipient; a person checks the exact request',
    exactPreview: true,
  },

  {
    id: 'customer-message.confirm',
    riskClass: 'customer-message',
    when: { kind: 'always' },
    mode: 'confirm',
    because: 'it reaches a customer and cannot be unsent',
    exactPreview: true,
  },

  {
    id: 'money.low-value',
    riskClass: 'money-movement',
    when: { kind: 'amount-below', limit: 'autoApproveBelowCents' },
    mode: 'automatic',
    because: 'within the explicit low-value policy',
  },
  {
    id: 'money.confirm',
    riskClass: 'money-movement',
    when: { kind: 'amount-at-least', limit: 'autoApproveBelowCents' },
    mode: 'confirm',
    because: 'at or above the low-value limit, a person approves the exact amount',
    exactPreview: true,
  },
  {
    id: 'money.above-human-limit',
    riskClass: 'money-movement',
    when: { kind: 'amount-above', limit: 'humanOnlyAboveCents' },
    mode: 'human-only',
    because: 'above the human-only limit',
  },
  {
    id: 'money.ambiguous',
    riskClass: 'money-movement',
    when: { kind: 'ambiguous' },
    mode: 'human-only',
    because: 'ambiguous money movement is never left to a click',
  },
  {
    id: 'money.no-amount',
    riskClass: 'money-movement',
    when: { kind: 'amount-missing' },
    mode: 'human-only',
    because: 'no amount to hold against the limits',
  },

  {
    id: 'destructive.confirm',
    riskClass: 'destructive',
    when: { kind: 'always' },
    mode: 'confirm',
    because: 'deletes and permission changes are irreversible or widen access',
    exactPreview: true,
  },
  {
    id: 'destructive.ambiguous',
    riskClass: 'destructive',
    when: { kind: 'ambiguous' },
    mode: 'human-only',
    because: 'an unclear target for a delete or permission change',
  },

  {
    id: 'production-change.confirm',
    riskClass: 'production-change',
    when: { kind: 'always' },
    mode: 'confirm',
    because: 'a production change has a wide blast radius',
    exactPreview: true,
  },
  {
    id: 'production-change.ambiguous',
    riskClass: 'production-change',
    when: { kind: 'ambiguous' },
    mode: 'human-only',
    because: 'unclear schema, traffic, rollback or data risk',
  },

  {
    id: 'unclassified.confirm',
    riskClass: 'unclassified',
    when: { kind: 'always' },
    mode: 'confirm',
    because: 'the tool declares no risk class: a person confirms each action until it does',
    exactPreview: true,
  },

  {
    id: 'tenant.confirm',
    riskClass: 'any',
    when: { kind: 'tenant-confirms' },
    mode: 'confirm',
    because: "the tenant's policy asks for confirmation of this risk class",
    exactPreview: true,
  },
];

/** What the decision table and tenant policy decided for one intent, with the rows that decided it. */
export interface PolicyDecision {
  mode: DecisionMode;
  riskClass: RiskClass;
  /** Ids of the rows that applied, in table order; `fallback.no-row` when none did. */
  rows: string[];
  /** The thresholds in force for this decision (after the tenant's overrides). */
  limits: Record<string, number>;
  reasons: string[];
  /** Some applying row demands the exact request in the confirmation, not a summary. */
  exactPreview: boolean;
}

/** The facts of one action the table looks at, independent of the operation that produced them. */
export interface DecisionFacts {
  amountCents?: number;
  ambiguous?: boolean;
  tenantPolicy?: TenantPolicy;
}

/**
 * Decides how one intent may proceed. `ambiguous` is the planner's (or caller's) own statement that the
 * request is uncertain: which customer, which amount, which target. Throws `InvalidIntent` for a
 * malformed tenant policy.
 */
export function decide(
  tool: ToolDescriptor,
  intent: Intent,
  ctx: { tenantPolicy?: TenantPolicy; ambiguous?: boolean } = {},
): PolicyDecision {
  return decideForRiskClass(tool.riskClass, {
    amountCents: amountOf(tool, intent),
    ambiguous: ctx.ambiguous,
    tenantPolicy: ctx.tenantPolicy,
  });
}

/**
 * The decision for one action as the engine applies it: the table, and above one of the tool's per-action limits
 * `human-only` (only a person may let it proceed), with the limit named among the reasons. The action workflow and
 * the record-first path decide with this, so the two cannot disagree on which actions run without a person.
 */
export function decideAction(tool: ToolDescriptor, intent: Intent, tenantPolicy?: TenantPolicy): PolicyDecision {
  const base = decide(tool, intent, tenantPolicy ? { tenantPolicy } : {});
  try {
    checkToolLimits(tool, intent);
    return base;
  } catch (err) {
    return { ...base, mode: 'human-only', reasons: [...base.reasons, (err as Error).message] };
  }
}

/** The table applied to a risk class directly (for operations that have no intent schema yet, and for tests). */
export function decideForRiskClass(riskClass: RiskClass, facts: DecisionFacts): PolicyDecision {
  const policy = checkTenantPolicy(facts.tenantPolicy);
  const limits: Record<LimitName, number> = {
    autoApproveBelowCents: policy.autoApproveBelowCents ?? DEFAULT_AUTO_APPROVE_BELOW_CENTS,
    humanOnlyAboveCents: policy.humanOnlyAboveCents ?? DEFAULT_HUMAN_ONLY_ABOVE_CENTS,
  };
  const confirmClasses: readonly RiskClass[] = policy.confirmRiskClasses ?? [];

  const applied: DecisionRow[] = [];
  const reasons: string[] = [];
  const usedLimits = new Set<LimitName>();
  for (const row of DECISION_TABLE) {
    if (row.riskClass !== 'any' && row.riskClass !== riskClass) continue;
    const detail = matches(row.when);
    if (detail === false) continue;
    applied.push(row);
    reasons.push(`${row.id}: ${row.because}${detail ? ` (${detail})` : ''}`);
  }

  const mode = applied.length
    ? applied.reduce<DecisionMode>((m, r) => (STRICTNESS[r.mode] > STRICTNESS[m] ? r.mode : m), 'automatic')
    : 'human-only';
  if (!applied.length)
    reasons.push(`fallback.no-row: no row of the decision table covers ${riskClass} with these facts`);
  return {
    mode,
    riskClass,
    rows: applied.length ? applied.map((r) => r.id) : ['fallback.no-row'],
    limits: Object.fromEntries([...usedLimits].map((name) => [name, limits[name]])),
    reasons,
    exactPreview: applied.some((r) => r.exactPreview === true),
  };

  /** false when the condition does not hold; otherwise the facts that made it hold ('' for none). */
  function matches(when: RowCondition): string | false {
    switch (when.kind) {
      case 'always':
        return '';
      case 'ambiguous':
        return facts.ambiguous === true ? 'flagged ambiguous' : false;
      case 'tenant-confirms':
        return confirmClasses.includes(riskClass) ? '' : false;
      case 'amount-missing':
        return facts.amountCents === undefined ? '' : false;
      case 'amount-below':
      case 'amount-at-least':
      case 'amount-above': {
        usedLimits.add(when.limit);
        if (facts.amountCents === undefined) return false;
        const limit = limits[when.limit];
        const holds =
          when.kind === 'amount-below'
            ? facts.amountCents < limit
            : when.kind === 'amount-at-least'
              ? facts.amountCents >= limit
              : facts.amountCents > limit;
        const op = when.kind === 'amount-below' ? '<' : when.kind === 'amount-at-least' ? '≥' : '>';
        return holds ? `amountCents ${facts.amountCents} ${op} ${when.limit} ${limit}` : false;
      }
    }
  }
}

function checkTenantPolicy(raw: TenantPolicy | undefined): TenantPolicy {
  if (raw === undefined) return {};
  // The policy may arrive through workflow input rather than the parsed config file, so its shape is checked here too.
  const fail = (field: string, message: string) =>
    new RetrysafeError('InvalidIntent', `tenantPolicy.${field}: ${message}`, { field: `tenantPolicy.${field}` });
  const parsed = tenantPolicySchemas().TenantPolicy.safeParse(raw);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw fail(issue.field, issue.message);
  }
  const auto = parsed.data.autoApproveBelowCents ?? DEFAULT_AUTO_APPROVE_BELOW_CENTS;
  const humanOnly = parsed.data.humanOnlyAboveCents ?? DEFAULT_HUMAN_ONLY_ABOVE_CENTS;
  if (auto > humanOnly) {
    throw fail('autoApproveBelowCents', `${auto} is above humanOnlyAboveCents ${humanOnly}`);
  }
  return parsed.data;
}
