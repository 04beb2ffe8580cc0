import type { RetrysafeClient } from '../client';
import { errorCodeOf, errorDetailsOf } from '../policies/errors';
import type { ToolRegistry } from '../policies/tool-registry';
import { actionResult, refusalResult, type ActionResult, type RefusalResult } from './action-result';

/** Errors that refuse a request before anything is claimed: the only ones answered as a plain refusal. */
const REFUSALS = new Set([
  'IntentMismatch',
  'InvalidIntent',
  'UnknownOperation',
  'PayloadTooLarge',
  'InvalidActionKey',
  'UnhashableValue',
]);

/** What an agent framework's tool adapter is bound to: the client, the tools, and the business event. */
export interface AgentToolOptions {
  retrysafe: RetrysafeClient;
  /** The same tools the workers register. */
  registry: ToolRegistry;
  tenant: string;
  /** The business event this agent acts on: an order, an invoice, a ticket. */
  eventId: string;
  /** Tells two uses of one tool for one event apart (`first-refund`); the tool's name when absent. */
  step?: string;
  /** Who claims, as the action's audit names it after the framework's name. */
  claimant?: string;
  /** How long a call waits for the outcome before it answers with the status as it stands; 20 s. */
  waitMs?: number;
  /** The Web UI link of an action by its key, put in every result; none when absent. */
  webUiUrl?: (key: string) => string | undefined;
}

/**
 * One tool call of an agent: claims the action keyed by tenant, event and step with the call's input as its
 * intent, and answers with the action's state, or with the refusal as a result (never thrown).
 */
export async function claimForAgent(
  framework: string,
  opts: AgentToolOptions,
  name: string,
  input: unknown,
): Promise<ActionResult | RefusalResult> {
  try {
    const snap = await opts.retrysafe.claimAction(
      {
        tenant: opts.tenant,
        eventId: opts.eventId,
        ...(opts.step ? { step: opts.step } : {}),
        claimant: `${framework}:${opts.claimant ?? 'agent'}`,
      },
      { ...(input as Record<string, unknown>), operation: name },
      { wait: true, timeoutMs: opts.waitMs ?? 20_000 },
    );
    return actionResult(snap, opts.webUiUrl?.(snap.key));
  } catch (err) {
    const code = errorCodeOf(err);
    // Refused before anything was claimed: the request itself is wrong, and calling again will not change that.
    if (code && REFUSALS.has(code)) {
      const reason = errorDetailsOf(err)?.reason;
      return refusalResult(code, (err as Error).message, typeof reason === 'string' ? reason : undefined);
    }
    // Anything else (Temporal unreachable, the wait cut short) may have come after the claim landed.
    return {
      ...refusalResult(code ?? 'Unavailable', (err as Error).message),
      next: 'retrysafe could not answer just now; the action may be under way. Call again with the same event for its outcome; do not retry under another event.',
    };
  }
}
