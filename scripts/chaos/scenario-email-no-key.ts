import type { SendEmailIntent } from '../../examples/tools';
import { actionState, recordsWhere, retrying, rootMessage, waitForActionStatus, type ActionState } from './observe';
import { RESTING_STATUSES, claimAndApprove, claimedActionKey } from './scenario-defaults';
import { exampleRegistry } from '../../examples/tools';

const tools = exampleRegistry();
import type { ChaosScenario, IterationContext, StartedWork, Tally } from './types';
import type { OperatorResolution } from 'retrysafe';

/**
 * An email on a provider with no key, no lookup and (here) no webhook, approved by a signed confirmation
 * as every customer email must be. Once a reply is lost nothing can
 * tell "sent" from "not sent", so the action must stop in needs_review without resending. The harness
 * then acts as the operator who checked the provider's dashboard (its ledger): one message found →
 * "confirmed", none → "not-happened", which allows exactly one cleared send. Expected end: exactly one
 * message, confirmed, and a review exactly when the reply was lost.
 */

const OPERATOR = 'chaos-harness';

/** Crash modes that always lose the reply of a started attempt: the action cannot know and must ask. */
const REVIEW_EXPECTED = new Set(['before-send', 'in-flight', 'after-commit', 'gateway-error']);

/**
 * A review is required when the worker died with the reply: not when a cluster kill spared it (`--target cluster`),
 * since the worker that sent then receives the held reply itself. It may still end in review (the completion
 * could not reach the cluster in time and the attempt timed out); either way with exactly one send.
 */
function reviewRequired(plan: IterationContext['plan']): boolean {
  return REVIEW_EXPECTED.has(plan.crash.mode) && !plan.clusterFault?.spareWorker;
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
      if (!reviewed && reviewRequired(ctx.plan) && !claimError) {
        unexplained.push(
          `the reply was lost (${ctx.plan.crash.mode}) yet the action reached ${firstRest?.status} without a review`,
        );
      }
      if (reviewed && ctx.plan.crash.mode !== 'random-time') {
        const expectedSends = ctx.plan.crash.mode === 'before-send' ? 0 : 1;
        if (sendsBeforeReview !== expectedSends) {
          unexplained.push(`${sendsBeforeReview} send(s) before the review, expected ${expectedSends}`);
        }
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
