import { RetrysafeError } from './errors';

/**
 * The life of one action. Every change goes through `transition`, the one place that knows which
 * moves are legal:
 *
 *   planned ─▶ [awaiting_confirmation ─▶] dispatching ─▶ confirmed | failed | unknown
 *   unknown ─▶ confirmed | failed | dispatching (provably absent: resend with the same key) | needs_review
 *   confirmed ─▶ compensating ─▶ compensated
 *   any open state ─▶ needs_review (ceiling, policy stop, unresolved evidence)
 *   needs_review ─▶ an operator's decision: confirmed | failed | dispatching | compensating
 */
export const ACTION_STATUSES = [
  'planned',
  'awaiting_confirmation',
  'dispatching',
  'confirmed',
  'failed',
  'unknown',
  'needs_review',
  'compensating',
  'compensated',
] as const;
/** Where an action is in its lifecycle; only the transitions of the status machine are legal. */
export type ActionStatus = (typeof ACTION_STATUSES)[number];

const LEGAL: Record<ActionStatus, readonly ActionStatus[]> = {
  planned: ['awaiting_confirmation', 'dispatching', 'failed', 'needs_review'],
  awaiting_confirmation: ['dispatching', 'failed', 'needs_review'],
  dispatching: ['confirmed', 'failed', 'unknown', 'needs_review'],
  unknown: ['confirmed', 'failed', 'dispatching', 'needs_review'],
  needs_review: ['confirmed', 'failed', 'dispatching', 'compensating'],
  confirmed: ['compensating', 'needs_review'],
  compensating: ['compensated', 'needs_review'],
  failed: [],
  compensated: [],
};

/** Statuses after which the action's workflow completes. */
export const FINAL_STATUSES: readonly ActionStatus[] = ['confirmed', 'failed', 'compensated'];

export function isFinal(status: ActionStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

export function canTransition(from: ActionStatus, to: ActionStatus): boolean {
  return LEGAL[from].includes(to);
}

/** Returns `to` when the move is legal; throws `IllegalTransition` naming both ends otherwise. */
export function transition(from: ActionStatus, to: ActionStatus): ActionStatus {
  if (!canTransition(from, to)) {
    throw new RetrysafeError('IllegalTransition', `an action cannot go from ${from} to ${to}`, { from, to });
  }
  return to;
}
