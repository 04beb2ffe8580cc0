/**
 * The settlement phase: a confirmed action whose tool has a compensation stays open until its owner says whether it
 * was kept or undone (the undo is an action of its own, with its own key), or the compensation window ends.
 *
 *   confirmed ─┬─ kept ─▶ closed
 *              └─ compensating ─▶ compensated | needs_review (the undo failed: see that action)
 */
import { condition } from '@temporalio/workflow';
import { COMPENSATION_WINDOW } from '../../policies/timeouts';
import type { Settlement } from '../../messages/action';
import type { ActionContext } from './context';

export async function awaitSettlement(ctx: ActionContext): Promise<void> {
  const { state, tool } = ctx;
  if (!tool.compensationTool || (state.status !== 'confirmed' && state.status !== 'compensating')) return;
  let handled: Settlement | undefined;
  for (;;) {
    const arrived = await condition(
      () => state.settlement !== undefined && state.settlement !== handled,
      COMPENSATION_WINDOW,
    );
    const s = state.settlement;
    if (!arrived || !s) return;
    handled = s;
    if (s.state === 'kept') return;
    const undo = `compensation ${s.compensationKey ?? ''}`;
    if (state.status === 'confirmed') await state.move('compensating', `${undo} claimed`, { by: s.by });
    if (s.state === 'compensated') return state.move('compensated', `${undo} confirmed`, { by: s.by });
    if (s.state === 'compensation-failed')
      return state.move('needs_review', `${undo} failed; see that action`, { by: s.by });
  }
}
