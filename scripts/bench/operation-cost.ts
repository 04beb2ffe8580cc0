/**
 * What one measured operation cost the server, read from the histories of the workflows it ran (a leg names
 * them): events, workflow tasks, activities, local activities, signals and updates, per workflow and in total.
 * The bench reports it beside the latencies, so a change to the action's path shows up as tasks removed, not
 * only as milliseconds on one machine.
 */
import type { Client } from '@temporalio/client';
import { historyAsJson, historyIfAny } from '../lib/history-json';
import { historyCost, type HistoryCost } from './history-cost';

export interface OperationCost {
  workflows: Array<{ role: string; workflowId: string; cost: HistoryCost }>;
  /** Summed over the workflows. */
  events: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  signals: number;
  updates: number;
}

/**
 * The workflows' costs; one marked `optional` (an action workflow, which starts only when someone must decide or
 * wait) is left out when it never ran.
 */
export async function operationCost(
  client: Client,
  workflows: ReadonlyArray<{ role: string; workflowId: string; optional?: boolean }>,
): Promise<OperationCost> {
  const costs = (
    await Promise.all(
      workflows.map(async ({ role, workflowId, optional }) => {
        const history = await historyIfAny(client, workflowId);
        if (!history) {
          if (optional) return undefined;
          throw new Error(`no workflow ${workflowId} to read the cost of`);
        }
        const events = historyAsJson(history).events ?? [];
        return { role, workflowId, cost: historyCost(events as Parameters<typeof historyCost>[0]) };
      }),
    )
  ).filter((c) => c !== undefined);
  return { workflows: costs, ...totalOf(costs.map((c) => c.cost)) };
}

export function totalOf(costs: readonly HistoryCost[]): Omit<OperationCost, 'workflows'> {
  const sum = (f: (c: HistoryCost) => number) => costs.reduce((n, c) => n + f(c), 0);
  return {
    events: sum((c) => c.events),
    workflowTasks: sum((c) => c.workflowTasks),
    activities: sum((c) => Object.values(c.activities).reduce((n, k) => n + k, 0)),
    localActivities: sum((c) => c.localActivities),
    // A signal sent by one workflow to another is received by the other: counted once, as received.
    signals: sum((c) => c.signalsReceived),
    updates: sum((c) => c.updates),
  };
}

/** `12 events, 4 workflow tasks (run 5 + action 7 events; …)` */
export function formatOperationCost(c: OperationCost): string {
  const parts = c.workflows.map((w) => `${w.role} ${w.cost.events} events / ${w.cost.workflowTasks} tasks`);
  return (
    `${c.events} events, ${c.workflowTasks} workflow tasks, ${c.activities} activities, ` +
    `${c.localActivities} local activities, ${c.signals} signals, ${c.updates} updates (${parts.join('; ')})`
  );
}
