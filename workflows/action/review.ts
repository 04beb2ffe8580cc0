/**
 * The review phase: the action waits in needs_review for a person's signed resolution, or for late evidence that a
 * lookup confirms. Past the escalation window it says so (log and audit) and keeps waiting: nothing is decided by
 * the clock.
 *
 *   needs_review ─┬─ operator: confirmed (with providerRef) | failed | compensate ─▶ done
 *                 ├─ operator: not-happened ─▶ dispatch again, with the same key
 *                 └─ late provider event ─▶ a lookup agrees ─▶ confirmed; otherwise a person still decides
 */
import { condition, log } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import { ESCALATION_WINDOW } from '../../policies/timeouts';
import type { ActionContext } from './context';
import { weighLateEvent } from './reconciliation';

/** Waits for an operator (or late evidence) and applies the decision. Returns 'dispatch' to send again. */
export async function awaitReview(ctx: ActionContext): Promise<'done' | 'dispatch'> {
  // A review may wait for days: decide with the keys and operator scopes in force now, not at the start.
  await ctx.state.decisions.load();
  return ctx.state.decisions.during(() => reviewed(ctx));
}

async function reviewed(ctx: ActionContext): Promise<'done' | 'dispatch'> {
  const { state, tool, input } = ctx;
  // A late event wakes the review. It confirms only when a lookup agrees; without a lookup it is recorded for the
  // person deciding.
  const lateEvent = () => state.evidence.unweighed(!tool.hasLookup);
  const arrived = () => state.pendingResolution() !== undefined || lateEvent() !== undefined;
  const escalateAt = Date.now() + msToNumber(ESCALATION_WINDOW);
  let escalated = false;
  for (;;) {
    if (escalated) await condition(arrived);
    else if (!(await condition(arrived, Math.max(escalateAt - Date.now(), 1)))) {
      log.warn('action escalated: unresolved past the escalation window', { key: input.key });
      state.note('escalated: unresolved past the escalation window');
      escalated = true;
      await condition(arrived);
    }
    if (state.pendingResolution()) break;
    if (await weighLateEvent(ctx, lateEvent()!)) return 'done';
  }
  const resolution = state.takeResolution()!;
  const by = resolution.operator;
  switch (resolution.decision) {
    case 'confirmed':
      await state.move('confirmed', `operator: ${resolution.reason}`, { by, providerRef: resolution.providerRef });
      return 'done';
    case 'failed':
      await state.fail('OperatorResolved', `operator: ${resolution.reason}`, { by });
      return 'done';
    case 'compensate':
      await state.move('compensating', `operator: ${resolution.reason}`, { by });
      return 'done';
    case 'not-happened':
      state.note(`operator says it did not happen: ${resolution.reason}`, by);
      return 'dispatch';
  }
}
