/**
 * Signed decisions inside workflow code: the one place runs and actions check an operator's envelope
 * (in update validators, so a refused one never enters history) and remember its nonce (in the
 * handler, so history replays the set).
 *
 * What a workflow trusts (approval keys, operator scopes) comes from its worker's configuration, loaded
 * by a local activity when the workflow starts waiting for a decision. A wait can last a day, and keys
 * and operators change meanwhile; so while it waits, the workflow re-reads them on request (the
 * refreshTrust update, which clients send when a decision is refused for an unknown key or scope).
 * A key added or an operator widened counts then; a key removed stops counting then, and again at the
 * re-read before an approved action sends.
 */
import { proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { RetrysafeError } from '../policies/errors';
import {
  decisionParams,
  decisionSchemas,
  verifyDecision,
  type Decision,
  type DecisionClaims,
  type DecisionParams,
  type DecisionTrust,
  type ExpectedDecision,
} from '../policies/signed-decision';
import { POLICY_START_TO_CLOSE } from '../policies/timeouts';
import {
  MAX_TRUST_REFRESHES_PER_WAIT,
  refreshTrustUpdate,
  TRUST_REFRESH_INTERVAL_MS,
  type TrustSummary,
} from '../messages/approval';

import { countDecision } from './workflow-metrics';

type Activities = ReturnType<typeof createActivities>;

/**
 * Where a workflow verifies signed decisions: the trusted keys and operator scopes it loaded, and the nonces already
 * taken.
 */
export class DecisionGate {
  /** The approval keys and operator scopes, from the worker's configuration (never from a message). */
  trust: DecisionTrust | undefined;
  private readonly usedNonces = new Set<string>();
  private lastRefreshMs: number | undefined;
  /** True while the workflow waits for a person (`during`): only then is a refresh taken. */
  private waiting = false;
  private refreshesThisWait = 0;
  /** The load at the start of a wait retries until the worker can answer: nothing is decided meanwhile. */
  private readonly policy = proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    summary: 'approval keys and operator scopes',
  });
  /** A refresh is someone's request: it gives up after a few tries and is refused, rather than hang. */
  private readonly refreshPolicy = proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    scheduleToCloseTimeout: '30s',
    retry: { maximumAttempts: 3 },
    summary: 'approval keys and operator scopes (refresh)',
  });

  constructor(
    private readonly target: string,
    private readonly tenant: string,
  ) {}

  /**
   * Builds the schemas a decision is checked with (built on first use, policies/signed-decision.ts). Call it before
   * the workflow shows that it waits for a decision, so that the workflow task that receives one does not build them.
   */
  prepare(): void {
    decisionSchemas();
  }

  /** Loads what the worker trusts now; call when starting to wait for a decision. */
  async load(): Promise<DecisionTrust> {
    this.prepare();
    const current = await this.policy.loadVolatilePolicy({ tenant: this.tenant });
    this.trust = { keys: current.trustedApprovalKeys, operators: current.operators };
    return this.trust;
  }

  /** Runs `wait` (the workflow waiting for a person's decision); refreshes are taken only meanwhile. */
  async during<T>(wait: () => Promise<T>): Promise<T> {
    this.waiting = true;
    this.refreshesThisWait = 0;
    try {
      return await wait();
    } finally {
      this.waiting = false;
    }
  }

  /** Installs the refreshTrust update (once per workflow; the gate's owner calls it at start). */
  acceptRefreshes(): void {
    setHandler(
      refreshTrustUpdate,
      async (): Promise<TrustSummary> => {
        this.lastRefreshMs = Date.now();
        this.refreshesThisWait++;
        let current;
        try {
          current = await this.refreshPolicy.loadVolatilePolicy({ tenant: this.tenant });
        } catch (err) {
          throw new RetrysafeError(
            'DecisionRejected',
            `${this.target} could not re-read its worker's trust (${(err as Error).message}); it keeps what it had`,
            { reason: 'trust-unavailable' },
          ).toFailure();
        }
        this.trust = { keys: current.trustedApprovalKeys, operators: current.operators };
        return { keyIds: Object.keys(this.trust.keys).sort(), operators: Object.keys(this.trust.operators).sort() };
      },
      {
        validator: () => {
          if (!this.waiting || !this.trust) {
            throw new RetrysafeError('DecisionRejected', `${this.target} is not waiting for a decision`, {
              reason: 'not-waiting',
            }).toFailure();
          }
          if (this.refreshesThisWait >= MAX_TRUST_REFRESHES_PER_WAIT) {
            throw new RetrysafeError(
              'DecisionRejected',
              `${this.target} has re-read its trust ${MAX_TRUST_REFRESHES_PER_WAIT} times during this wait; ` +
                'restart the worker with the new keys, or let the wait end',
              { reason: 'refreshed-too-often' },
            ).toFailure();
          }
          if (this.lastRefreshMs !== undefined && Date.now() - this.lastRefreshMs < TRUST_REFRESH_INTERVAL_MS) {
            throw new RetrysafeError(
              'DecisionRejected',
              `${this.target} re-read its trust less than ${TRUST_REFRESH_INTERVAL_MS / 1000} s ago; send the decision again`,
              { reason: 'refreshed-recently' },
            ).toFailure();
          }
        },
      },
    );
  }

  /** Verifies a signed decision; refusals leave as typed, non-retryable failures naming the reason. */
  verify(signed: unknown, expected: Omit<ExpectedDecision, 'nonceUsed'>): DecisionClaims {
    try {
      if (!this.trust) {
        throw new RetrysafeError(
          'DecisionRejected',
          `${this.target} is not waiting for a decision yet; send it again`,
          {
            reason: 'not-ready',
          },
        );
      }
      return verifyDecision(signed, { ...expected, nonceUsed: (n) => this.usedNonces.has(n) }, this.trust, Date.now());
    } catch (err) {
      if (!(err instanceof RetrysafeError)) throw err;
      // Counted where it is refused (a validator: a refused decision never enters history, so never replays).
      countDecision(claimedDecision(signed, expected.decisions), 'refused', err.reason ?? err.code);
      throw err.toFailure();
    }
  }

  /** Records that a verified decision was taken (call first thing in the update handler). */
  taken(claims: DecisionClaims): void {
    this.usedNonces.add(claims.nonce);
    countDecision(claims.decision, 'applied');
  }
}

/** The parameters of a verified decision, as typed failures when malformed. */
export function paramsOf<D extends Decision>(claims: DecisionClaims, decision: D): DecisionParams<D> {
  return failure(() => decisionParams({ ...claims, decision }));
}

/** The decision an envelope claims, when it is one the workflow expected; `other` for anything else it says. */
function claimedDecision(signed: unknown, expected: readonly Decision[]): string {
  const claimed = (signed as { claims?: { decision?: unknown } } | null)?.claims?.decision;
  return expected.find((d) => d === claimed) ?? 'other';
}

function failure<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RetrysafeError) throw err.toFailure();
    throw err;
  }
}
