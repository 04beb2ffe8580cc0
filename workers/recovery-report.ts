import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { SA_KIND, SA_OPERATION, SA_STATUS } from '../policies/search-attributes';

/** Statuses of actions that are not settled; a restarted worker lists them before it takes work. */
export const INCOMPLETE_STATUSES = [
  'planned',
  'awaiting_confirmation',
  'dispatching',
  'unknown',
  'needs_review',
  'compensating',
];

/** The actions not yet final, counted by status, with the oldest ones listed. */
export interface IncompleteSummary {
  total: number;
  byStatus: Record<string, number>;
  keys: Array<{ key: string; status: string; operation: string }>;
}

/** Lists open actions by search attribute and groups them by status. */
export async function listIncompleteActions(client: Client, limit = 200): Promise<IncompleteSummary> {
  const statuses = INCOMPLETE_STATUSES.map((s) => `'${s}'`).join(', ');
  const query = `${SA_KIND.name} = 'action' AND ${SA_STATUS.name} IN (${statuses}) AND ExecutionStatus = 'Running'`;
  const summary: IncompleteSummary = { total: 0, byStatus: {}, keys: [] };
  for await (const wf of client.workflow.list({ query })) {
    const status = String(wf.typedSearchAttributes.get(SA_STATUS) ?? 'unknown');
    const operation = String(wf.typedSearchAttributes.get(SA_OPERATION) ?? '?');
    summary.total++;
    summary.byStatus[status] = (summary.byStatus[status] ?? 0) + 1;
    if (summary.keys.length < limit) summary.keys.push({ key: wf.workflowId, status, operation });
  }
  return summary;
}

export async function reportIncompleteActions(client: Client, logger: Logger): Promise<IncompleteSummary | undefined> {
  try {
    const summary = await listIncompleteActions(client);
    if (summary.total === 0) logger.info('recovery: no incomplete actions');
    else
      logger.warn(
        { byStatus: summary.byStatus, keys: summary.keys.slice(0, 20) },
        `recovery: ${summary.total} incomplete actions; they reconcile before their runs continue`,
      );
    return summary;
  } catch (err) {
    logger.warn({ error: (err as Error).message }, 'recovery: could not list incomplete actions');
    return undefined;
  }
}
