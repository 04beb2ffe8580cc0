import type { RetrysafeClient } from '../../../client';
import type { ApprovalOutcome } from '../../../messages/approval';
import { errorCodeOf, RetrysafeError } from '../../../policies/errors';
import type { SignedDecision } from '../../../policies/signed-decision';
import type { ApprovalSigner, Operator, SignedEvent } from '../approval-signer';
import type { QueueStatus } from './action-queues';
import { maskText } from './display-masking';
import type { FormFields } from './request-body';
import type { Notice } from './session-store';

/**
 * What the page's decision forms do: sign the decision for the signed-in operator (never one a form names), check
 * that the action is still where the form showed it, deliver the envelope to the action through the client, and
 * describe the answer, an acceptance or a refusal, as a notice. The workflow verifies everything again; the checks
 * here only refuse early, before anything is sent.
 */

export const DECIDE_FIELDS = ['csrf', 'key', 'requestHash', 'decision', 'reason'] as const;
export const RESOLVE_FIELDS = ['csrf', 'key', 'requestHash', 'outcome', 'providerRef', 'reason'] as const;
export const RESOLUTION_OUTCOMES = ['confirmed', 'not-happened', 'failed', 'compensate'] as const;

export interface DecisionContext {
  signer: ApprovalSigner;
  retrysafe: RetrysafeClient;
  onSigned?: (event: SignedEvent) => void;
  log: (msg: string) => void;
}

/** Approve or reject an action awaiting confirmation, for the request hash the form showed. */
export async function submitApprovalForm(ctx: DecisionContext, operator: Operator, form: FormFields): Promise<Notice> {
  const decision = form.decision;
  if (decision !== 'approve' && decision !== 'reject') return invalid('decision', 'must be approve or reject');
  const reason = reasonOf(form);
  if (typeof reason !== 'string') return reason;
  const signed = sign(ctx, operator, { decision, key: form.key, requestHash: form.requestHash, params: { reason } });
  if ('outcome' in signed) return signed;
  const stale = await staleFormProblem(ctx, signed.claims.key, 'awaiting_confirmation');
  if (stale) return stale;
  return deliver(ctx, signed, async () => {
    const outcome = (await ctx.retrysafe.submitDecision(signed)) as ApprovalOutcome;
    const key = signed.claims.key;
    if (outcome.decision !== decision) {
      // The action had taken another decision first (another tab, another operator): it answers with that one.
      return {
        outcome: 'refused',
        reason: 'already-decided',
        title: `Not applied: ${key} was already ${pastTense(outcome.decision)} by ${outcome.approver}`,
        detail: `The action is ${outcome.status}; your ${decision} changed nothing.`,
        key,
      };
    }
    return {
      outcome: 'done',
      title: `${capitalized(pastTense(decision))} by ${operator.name}: ${key}`,
      detail: `The action is now ${outcome.status}.`,
      key,
    };
  });
}

/** Resolve an action in needs_review: what a person found happened, with the provider's reference when confirmed. */
export async function submitResolutionForm(
  ctx: DecisionContext,
  operator: Operator,
  form: FormFields,
): Promise<Notice> {
  const outcome = form.outcome;
  if (!(RESOLUTION_OUTCOMES as readonly string[]).includes(outcome ?? '')) {
    return invalid('outcome', `must be one of ${RESOLUTION_OUTCOMES.join(', ')}`);
  }
  const reason = reasonOf(form);
  if (typeof reason !== 'string') return reason;
  const providerRef = form.providerRef?.trim();
  const params = { outcome, reason, ...(providerRef ? { providerRef } : {}) };
  const signed = sign(ctx, operator, { decision: 'resolve', key: form.key, requestHash: form.requestHash, params });
  if ('outcome' in signed) return signed;
  const stale = await staleFormProblem(ctx, signed.claims.key, 'needs_review');
  if (stale) return stale;
  return deliver(ctx, signed, async () => {
    const after = await ctx.retrysafe.resolveAction(signed);
    return {
      outcome: 'done',
      title: `Resolved as ${outcome} by ${operator.name}: ${after.key}`,
      detail: `The action is now ${after.status}${after.providerRef ? ` (provider reference ${after.providerRef})` : ''}.`,
      key: after.key,
    };
  });
}

function reasonOf(form: FormFields): string | Notice {
  const reason = (form.reason ?? '').trim();
  if (reason.length < 3 || reason.length > 500) return invalid('reason', 'say why in 3 to 500 characters');
  return reason;
}

/** Signs as `operator`; the signer refuses a tenant or role outside the operator's scope before anything is read. */
function sign(ctx: DecisionContext, operator: Operator, request: Record<string, unknown>): SignedDecision | Notice {
  try {
    return ctx.signer.sign(operator, request);
  } catch (err) {
    if (err instanceof RetrysafeError && err.code === 'InvalidIntent') {
      return invalid(String(err.details.field ?? '(form)'), err.message.replace(/^[^:]+: /, ''));
    }
    if (err instanceof RetrysafeError && err.code === 'DecisionRejected') {
      return {
        outcome: 'refused',
        reason: String(err.details.reason ?? 'DecisionRejected'),
        title: `Refused (${String(err.details.reason ?? 'DecisionRejected')}): nothing was signed or sent`,
        detail: err.message,
      };
    }
    throw err;
  }
}

/**
 * A form shown before the action moved on (decided in another tab, resolved by someone else) is refused here, so
 * nothing is sent for it; the workflow would refuse or ignore it too.
 */
async function staleFormProblem(ctx: DecisionContext, key: string, expected: QueueStatus): Promise<Notice | undefined> {
  const now = await ctx.retrysafe.getAction(key);
  if (!now) return { outcome: 'refused', reason: 'no-such-action', title: `Refused: there is no action ${key}`, key };
  if (now.status === expected) return undefined;
  return {
    outcome: 'refused',
    reason: 'stale-form',
    title: `Refused: the form was stale; ${key} is ${now.status} now`,
    detail: `It is no longer ${expected.replace('_', ' ')}, so nothing was sent. The queue below is current.`,
    key,
  };
}

async function deliver(ctx: DecisionContext, signed: SignedDecision, send: () => Promise<Notice>): Promise<Notice> {
  const { claims, publicKeyId } = signed;
  ctx.onSigned?.({
    operator: claims.operator,
    key: claims.key,
    decision: claims.decision,
    keyId: publicKeyId,
    expiresAt: claims.expiresAt,
  });
  try {
    return await send();
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal) {
      return {
        outcome: 'refused',
        reason: refusal.reason ?? refusal.code,
        title: `Refused by the action (${refusal.reason ?? refusal.code}): ${claims.key}`,
        detail: maskText(refusal.message),
        key: claims.key,
      };
    }
    ctx.log(`approval page: delivering ${claims.decision} for ${claims.key} failed: ${(err as Error).message}`);
    return {
      outcome: 'failed',
      title: `Could not deliver the ${claims.decision} for ${claims.key}`,
      detail: 'Temporal did not answer as expected; see the approval service log. Sending it again is safe.',
      key: claims.key,
    };
  }
}

/** The retrysafe code, the reason in the failure's details and its message, from a refused update. */
function refusalOf(err: unknown): { code: string; reason?: string; message: string } | undefined {
  const code = errorCodeOf(err);
  if (!code) return undefined;
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof RetrysafeError) return { code, reason: stringOr(e.details.reason), message: e.message };
    const failure = e as { type?: unknown; message?: unknown; details?: unknown; cause?: unknown };
    if (failure.type === code) {
      const details = Array.isArray(failure.details)
        ? (failure.details[0] as { reason?: unknown } | undefined)
        : undefined;
      return { code, reason: stringOr(details?.reason), message: String(failure.message ?? code) };
    }
    e = failure.cause;
  }
  return { code, message: (err as Error).message ?? code };
}

function invalid(field: string, message: string): Notice {
  return { outcome: 'refused', reason: 'invalid', title: `Refused: ${field} ${message}`, detail: 'Nothing was sent.' };
}

const stringOr = (value: unknown) => (typeof value === 'string' ? value : undefined);
const pastTense = (decision: string) =>
  decision === 'approve' ? 'approved' : decision === 'reject' ? 'rejected' : decision;
const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
