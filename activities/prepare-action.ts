import { RetrysafeError } from '../policies/errors';
import { cardNumberModeFor, type TenantPolicyConfig } from '../policies/tenant-policy';
import type { Json, ToolDescriptor } from '../policies/tool';
import type { Intent, ToolRegistry } from '../policies/tool-registry';

/**
 * The worker's registry, read by workflow code through local activities: their results are recorded in
 * history, so a run replays with the contract it acted under and the workflow bundle never loads a tool.
 */
export interface PreparedAction {
  /** Normalized by the tool's schema. */
  intent: Intent;
  requestHash: string;
  tool: ToolDescriptor;
  summary: string;
}

export function createPrepareAction(deps: { tools: ToolRegistry; tenantPolicies?: TenantPolicyConfig }) {
  /**
   * Validates, normalizes and hashes a proposed intent; a bad one fails with the field it names. A card
   * number in its text is refused, or masked when the run's `tenant` chose that in its tenant policy
   * (runs that do not pass their tenant get the default, refuse).
   */
  async function prepareAction(input: { intent: unknown; tenant?: string }): Promise<PreparedAction> {
    return typed(() => {
      const intent = deps.tools.parseIntent(input.intent, {
        cardNumbers: cardNumberModeFor(deps.tenantPolicies, input.tenant),
      });
      return {
        intent,
        requestHash: deps.tools.hash(intent),
        tool: deps.tools.describe(intent),
        summary: deps.tools.summarize(intent),
      };
    });
  }

  /** The undo of a done action, from its tool's declared compensation; null when nothing needs undoing. */
  async function deriveCompensation(input: {
    intent: Intent;
    providerRef: string;
    result?: Json | null;
  }): Promise<PreparedAction | null> {
    return typed(() => {
      const undo = deps.tools.compensationFor(deps.tools.parseIntent(input.intent), {
        providerRef: input.providerRef,
        ...(input.result !== undefined && input.result !== null ? { result: input.result } : {}),
      });
      if (!undo) return null;
      return {
        intent: undo,
        requestHash: deps.tools.hash(undo),
        tool: deps.tools.describe(undo),
        summary: deps.tools.summarize(undo),
      };
    });
  }

  return { prepareAction, deriveCompensation };
}

/** Typed errors leave as non-retryable ApplicationFailures. */
export function typed<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
}
