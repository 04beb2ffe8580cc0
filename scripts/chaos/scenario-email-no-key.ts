import type { SendEmailIntent } from '../../examples/tools';
import { actionState, recordsWhere, retrying, rootMessage, waitForActionStatus, type ActionState } from './observe';
import { RESTING_STATUSES, claimAndApprove, claimedActionKey } from './scenario-defaults';
import { exampleRegistry } from '../../examples/tools';
import type { LedgerRequest } from '../../examples/sandbox-providers/types';
import type { ChaosScenario, CrashMode, IterationContext, ObservedDisturbance, StartedWork, Tally } from './types';
import type { OperatorResolution } from 'retrysafe';

const tools = exampleRegistry();

/**
 * An email on a provider with no key, no lookup and (here) no webhook, approved by a signed confirmation
 * as every customer email must be. Once a reply is lost nothing can
 * tell "sent" from "not sent", so the action must stop in needs_review without resending. The harness
 * then acts as the operator who checked the provider's dashboard (its ledger): one message found →
 * "confirmed", none → "not-happened", which allows exactly one cleared send. Expected end: exactly one
 * message, confirmed, and a review whenever a reply was seen lost. What counts as lost is what the harness observed
 * (the kill it saw land, the fault it saw hit) and what the provider logged, never what the plan asked for: under
 * --faults the plan's crash mode is not what happened, and an armed point can be missed.
 */

const OPERATOR = 'chaos-harness';

/** Points of the attempt where a worker killed there leaves its reply unheard (the provider committed or answered). */
const KILLED_AFTER_COMMIT = new Set<CrashMode>(['in-flight', 'after-commit', 'gateway-error']);

/** What the harness and the provider observed about one email's attempts, from which its expectations follow. */
export interface EmailFacts {
  /** The kill the harness observed (a kill a cluster fault spared the worker from does not count) and the fault. */
  observed: ObservedDisturbance;
  /** The provider's log of this email's requests (by its reference). */
  requests: ReadonlyArray<Pick<LedgerRequest, 'outcome' | 'faults' | 'status'>>;
}

/**
 * Why the action cannot know whether its email went: each reason is an observed fact. `afterCommit`: the provider
 * committed and the reply did not reach a live worker (one send before the review); `beforeSend`: the worker holding
 * the attempt died before its send (nothing sent before the review).
 */
export function lostReplies({ observed, requests }: EmailFacts): { afterCommit: string[]; beforeSend?: string } {
  const afterCommit: string[] = [];
  for (const r of requests) {
    if (r.outcome !== 'committed' && r.outcome !== 'replayed') continue;
    if (r.faults.includes('drop-after-commit')) afterCommit.push('the provider dropped its reply after committing');
    if (r.faults.includes('status-after-commit'))
      afterCommit.push(`the provider answered ${r.status} after committing`);
  }
  const { crash, fault } = observed;
  const killed = crash?.pointReached && crash.signal === 'SIGKILL' && !crash.workerSpared ? crash.mode : undefined;
  if (killed && KILLED_AFTER_COMMIT.has(killed)) afterCommit.push(`the worker was killed at ${killed}`);
  if (fault?.injected && (fault.kind === 'provider-reset' || fault.kind === 'provider-timeout')) {
    afterCommit.push(`the reply met ${fault.kind}`);
  }
  return {
    afterCommit,
    ...(killed === 'before-send' ? { beforeSend: 'the worker holding the attempt was killed before its send' } : {}),
  };
}

function start(ctx: IterationContext): StartedWork {
  const intent: SendEmailIntent = {
    operation: 'send-email',
    to: 'renewals@example.com',
    subject: `Your renewal ${ctx.eventId}`,
    body: 'Thank you for renewing. (Sent by the chaos harness: exactly one of these is expected.)',
  };
  const key = claimedActionKey(ctx, 'send-email');
  const messagesFor = async () => recordsWhere(await ctx.providers.email.ledger(), 'messages', { reference: key });
  const requestsFor = async () => (await ctx.providers.email.ledger()).requests.filter((r) => r.reference === key);
  let claimError: Error | undefined;
  let firstRest: ActionState | undefined;
  let sendsBeforeReview: number | undefined;
  let resolution: OperatorResolution['decision'] | undefined;
  let final: ActionState | undefined;

  const settled = (async () => {
    try {
      // A customer email always needs a person's signed approval of the exact request (decision table).
      await claimAndApprove(ctx, key, intent);
    } catch (err) {
      claimError = err as Error;
      return;
    }
    firstRest = await waitForActionStatus(ctx.client, key, RESTING_STATUSES, ctx.signal);
    if (firstRest?.status !== 'needs_review') {
      final = firstRest;
      return;
    }
    const messages = await messagesFor();
    sendsBeforeReview = messages.length;
    const decision: OperatorResolution =
      messages.length === 1
        ? {
            decision: 'confirmed',
            operator: OPERATOR,
            reason: `provider shows ${messages[0].id}`,
            providerRef: messages[0].id,
          }
        : { decision: 'not-happened', operator: OPERATOR, reason: 'provider shows no message for this reference' };
    if (messages.length > 1) return; // a duplicate already: nothing an operator says can undo it
    resolution = decision.decision;
    const { decision: outcome, reason, providerRef } = decision;
    const signed = ctx.approver.sign('resolve', key, {
      requestHash: tools.hash(tools.parseIntent(intent)),
      params: { outcome, reason, ...(providerRef ? { providerRef } : {}) },
    });
    await retrying(() => ctx.retrysafe.resolveAction(signed), {
      budgetMs: Number.POSITIVE_INFINITY,
      signal: ctx.signal,
    });
    final = await waitForActionStatus(ctx.client, key, ['confirmed', 'failed'], ctx.signal);
  })();

  return {
    settled,
    async verify(): Promise<Tally> {
      const messages = await messagesFor();
      const state = final ?? (await actionState(ctx.client, key, ctx.stack.ledger));
      const reviewed = firstRest?.status === 'needs_review';
      const status = claimError
        ? 'claim-failed'
        : `${reviewed ? `needs_review→${resolution ?? '?'}→` : ''}${state?.status ?? 'absent'}`;
      const unexplained: string[] = [];
      if (claimError) unexplained.push(`claim failed: ${rootMessage(claimError)}`);
      if (!claimError && state?.status !== 'confirmed') unexplained.push(`${key} ended ${state?.status ?? 'absent'}`);
      // What the review had to be, from what was observed: the harness's kill and fault, the provider's log.
      const lost = lostReplies({ observed: ctx.observed(), requests: await requestsFor() });
      const why = [...lost.afterCommit, ...(lost.beforeSend ? [lost.beforeSend] : [])];
      if (!reviewed && why.length && !claimError) {
        unexplained.push(`${why.join('; ')}, yet the action reached ${firstRest?.status} without a review`);
      }
      // A reply lost after the commit leaves one send before the review; a kill before the send, none (nothing may
      // send blind after it). A disturbance that was neither (a random-time kill, a pause) expects no number.
      const expectedSends = lost.afterCommit.length ? 1 : lost.beforeSend ? 0 : undefined;
      if (reviewed && expectedSends !== undefined && sendsBeforeReview !== expectedSends) {
        unexplained.push(
          `${sendsBeforeReview} send(s) before the review (${why.join('; ')}), expected ${expectedSends}`,
        );
      }
      return {
        outcome: status,
        expectedEffects: 1,
        actualEffects: messages.length,
        duplicates: Math.max(0, messages.length - 1),
        lost: Math.max(0, 1 - messages.length),
        unknown: state?.status === 'unknown' ? 1 : 0,
        needsReview: reviewed ? 1 : 0,
        unexplained,
        notes: [`action ${key}`, `messages ${messages.map((m) => m.id).join(', ') || 'none'}`],
      };
    },
  };
}

export const emailNoKeyScenario: ChaosScenario = {
  name: 'email-no-key',
  summary: 'email with no key, no lookup, webhook off: a lost reply must end in needs_review, one send',
  operation: 'send-email',
  providers: ['email'],
  modes: [
    ['before-send', 1],
    ['in-flight', 2],
    ['after-commit', 2],
    ['gateway-error', 1],
    ['random-time', 1],
  ],
  // No reset: a reset is ambiguous, so it rightly sends the email to review with nothing sent, which would
  // blur what each crash mode is expected to leave behind.
  faultPool: [
    ['none', 3],
    ['status-5xx', 1],
    ['status-429', 1],
    ['delay', 1],
  ],
  dropChance: 0,
  declineChance: 0,
  readLagMs: [0, 0],
  async prepare(providers) {
    // Without this the delivery webhook would reach the action as evidence (recorded, never a confirmation: the
    // email tool has no lookup to verify it), which would blur what each crash mode leaves behind.
    await providers.email.configure({ webhookUrl: null });
  },
  retrysafe: { start },
};
