/**
 * Signed decisions inside workflow code: the one place runs and actions check an operator's envelope
 * (in update validators, so a refused one never enters history) and remember its nonce (in the
 * handler, so history replays the set).
 */
import { RetrysafeError } from '../policies/errors';
import {
  decisionParams,
  verifyDecision,
  type Decision,
  type DecisionClaims,
  type DecisionParams,
  type DecisionTrust,
  type ExpectedDecision,
} from '../policies/signed-decision';

export class DecisionGate {
  /** The approval keys and operator scopes, from the worker's configuration (never from a message). */
  trust: DecisionTrust | undefined;
  private readonly usedNonces = new Set<string>();

  constructor(private readonly target: string) {}

  /** Verifies a signed decision; refusals leave as typed, non-retryable failures naming the reason. */
  verify(signed: unknown, expected: Omit<ExpectedDecision, 'nonceUsed'>): DecisionClaims {
    if (!this.trust) {
      throw new RetrysafeError('DecisionRejected', `${this.target} is not waiting for a decision yet; send it again`, {
        reason: 'not-ready',
      }).toFailure();
    }
    return failure(() =>
      verifyDecision(signed, { ...expected, nonceUsed: (n) => this.usedNonces.has(n) }, this.trust!, Date.now()),
    );
  }

  /** Records that a verified decision was taken (call first thing in the update handler). */
  taken(claims: DecisionClaims): void {
    this.usedNonces.add(claims.nonce);
  }
}

/** The parameters of a verified decision, as typed failures when malformed. */
export function paramsOf<D extends Decision>(claims: DecisionClaims, decision: D): DecisionParams<D> {
  return failure(() => decisionParams({ ...claims, decision }));
}

function failure<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
}
