/**
 * What the workflows count, on the workflow's own metric meter: the SDK forwards it to the worker's Runtime
 * (beside the activities' metrics, metrics/instruments.ts) with namespace, taskQueue and workflowType labels, and
 * drops it while a history is replayed. A workflow task that fails and is retried (a signal arrived while it
 * completed) runs its new part again and counts it again: these counters are for rates and reasons, not for exact
 * totals; statuses are counted from the ledger instead.
 */
import { metricMeter } from '@temporalio/workflow';
import { label } from '../metrics/instruments';

/** An action entered `status` (into unknown, needs_review, confirmed…). */
export function countStatusChange(tool: string, tenant: string, status: string): void {
  metricMeter
    .createCounter(
      'retrysafe_action_status_changes_total',
      undefined,
      'Action statuses entered, by tool, tenant and status',
    )
    .add(1, { tool: label(tool), tenant: label(tenant), status: label(status) });
}

/** A signed decision (confirm, review, raise-ceiling…) was applied or refused, with the validator's reason. */
export function countDecision(decision: string, result: 'applied' | 'refused', reason = ''): void {
  metricMeter
    .createCounter(
      'retrysafe_decisions_total',
      undefined,
      'Signed decisions applied or refused, by decision and reason',
    )
    .add(1, { decision: label(decision), result, reason: label(reason) });
}

/** An agent run paused in needs_review at `ceiling` (steps, deadline, spend, side effects, a per-action limit). */
export function countCeilingHit(ceiling: string): void {
  metricMeter
    .createCounter('retrysafe_ceilings_hit_total', undefined, 'Agent runs paused by a ceiling, by ceiling')
    .add(1, { ceiling: label(ceiling) });
}
