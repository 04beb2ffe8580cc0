/** What every phase of an action workflow works with: its input, its state, the policy it runs under, its activities. */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import type { ActionPolicy } from '../../activities/load-action-policy';
import type { PolicyDecision } from '../../policies/decision-table';
import { POLICY_START_TO_CLOSE, READ_START_TO_CLOSE, SENDING_ACTIVITY } from '../../policies/timeouts';
import type { ActionInput } from '../../messages/action';
import type { ActionState } from './state';

type Activities = ReturnType<typeof createActivities>;

/** How a dispatch may send: a first send, after a possible earlier one, or after an operator cleared a resend. */
export type DispatchMode = 'first' | 'maybe-sent' | 'operator-cleared';

export interface ActionContext {
  readonly input: ActionInput;
  readonly state: ActionState;
  /** What the worker's registry and policy say of this exact request. */
  readonly policy: ActionPolicy;
  readonly tool: ActionPolicy['tool'];
  /** Who may let it through: automatic, a person's confirmation, or a person only. */
  readonly decision: PolicyDecision;
  readonly activities: ReturnType<typeof actionActivities>;
}

/** The policy's local activity: the full load at the start (the executor re-reads the volatile facts itself). */
export function policyActivities(input: ActionInput) {
  return proxyLocalActivities<Activities>({
    startToCloseTimeout: POLICY_START_TO_CLOSE,
    summary: `policy for ${input.tenant}`,
  });
}

/** The activities that act and read at the provider, named in the Web UI by the action's summary and key. */
export function actionActivities(input: ActionInput, policy: ActionPolicy) {
  const { executeAction } = proxyActivities<Activities>({
    ...SENDING_ACTIVITY,
    summary: `${policy.tool.name}: ${policy.summary}`,
  });
  const { lookupAction } = proxyActivities<Activities>({
    startToCloseTimeout: READ_START_TO_CLOSE,
    retry: { maximumAttempts: 3 },
    summary: `look up ${input.key}`,
  });
  return { executeAction, lookupAction };
}

/** The innermost message of a failure chain: what actually went wrong. */
export function causeMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
