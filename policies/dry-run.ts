import type { PolicyDecision } from './decision-table';
import type { DryRunDescription } from './tool';

/**
 * What a person sees before approving: the exact effect computed without performing it. The approval
 * that follows signs `key` and `requestHash`, so it covers this request and no other; the payload here
 * is the memo-safe preview (emails masked, secret fields dropped), while the hash covers every field.
 */
export interface DryRun {
  key: string;
  operation: string;
  /** What the action touches at the provider: a customer, a charge, a recipient, a SKU… */
  target: string;
  /** The intent as the action would send it, redacted for display. */
  payload: Record<string, unknown>;
  /** How far the effect reaches, in one line. */
  scope: string;
  /** One line, as the Web UI and the ops CLI show the action. */
  summary: string;
  amountCents?: number;
  currency?: string;
  policy: PolicyDecision;
  requestHash: string;
  createdAt: string;
}

/** The facts of a dry run that come from the action's tool (through the worker's registry). */
export interface DryRunFacts extends DryRunDescription {
  operation: string;
  summary: string;
  preview: Record<string, unknown>;
  amountCents?: number;
  currency?: string;
}

/** Builds the dry run of one action. Pure: the caller supplies the time (workflow time inside a workflow). */
export function buildDryRun(
  key: string,
  facts: DryRunFacts,
  requestHash: string,
  decision: PolicyDecision,
  nowIso: string,
): DryRun {
  return {
    key,
    operation: facts.operation,
    target: facts.target,
    payload: facts.preview,
    scope: facts.scope,
    summary: facts.summary,
    ...(facts.amountCents !== undefined ? { amountCents: facts.amountCents } : {}),
    ...(facts.currency !== undefined ? { currency: facts.currency } : {}),
    policy: decision,
    requestHash,
    createdAt: nowIso,
  };
}
