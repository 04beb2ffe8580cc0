import type { RetrysafeClient } from '../../../client';
import type { ActionSnapshot } from '../../../messages/action';
import { parseActionKey } from '../../../policies/action-key';
import type { Operator } from '../approval-signer';

/**
 * The two queues a person works on, as one operator may see them: actions awaiting a signed approval of their dry
 * run, and actions in needs_review. Only actions of the operator's tenants are listed (all of them for `*`); each
 * is read again by key, and kept only if it is still in that status and still of one of those tenants.
 */

export type QueueStatus = 'awaiting_confirmation' | 'needs_review';
export const QUEUE_STATUSES: readonly QueueStatus[] = ['awaiting_confirmation', 'needs_review'];
/** Per queue and tenant: a page a person can read, not a listing of everything. */
export const QUEUE_LIMIT = 50;

export interface ActionQueue {
  status: QueueStatus;
  actions: ActionSnapshot[];
  /** True when a listing hit QUEUE_LIMIT: there are more than shown. */
  truncated: boolean;
}

/** Whether `operator` acts for `tenant` (as the signer and the workflow decide it: its tenants, or `*`). */
export function operatorActsFor(operator: Operator, tenant: string): boolean {
  return operator.tenants.includes('*') || operator.tenants.includes(tenant);
}

/** The tenant an action key names, or undefined for anything that is not an action key. */
export function tenantOfActionKey(key: string): string | undefined {
  try {
    return parseActionKey(key).tenant;
  } catch {
    return undefined;
  }
}

export async function loadQueue(
  retrysafe: RetrysafeClient,
  operator: Operator,
  status: QueueStatus,
): Promise<ActionQueue> {
  const tenants: Array<string | undefined> = operator.tenants.includes('*') ? [undefined] : [...operator.tenants];
  const listings = (
    await Promise.all(tenants.map((tenant) => retrysafe.listActions({ status, tenant, limit: QUEUE_LIMIT })))
  ).map((found) => ({ found, truncated: found.length >= QUEUE_LIMIT }));
  const inScope = (key: string, tenant: string) => {
    const keyTenant = tenantOfActionKey(key);
    return keyTenant !== undefined && keyTenant === tenant && operatorActsFor(operator, keyTenant);
  };
  const keys = [
    ...new Set(
      listings
        .flatMap((l) => l.found)
        .filter((a) => a.running && inScope(a.key, a.tenant))
        .sort((a, b) => a.startTime.getTime() - b.startTime.getTime())
        .map((a) => a.key),
    ),
  ];
  // Visibility lags the workflow a little: what the listing says is checked against the action itself.
  const snapshots = await Promise.all(keys.map((key) => retrysafe.getAction(key).catch(() => undefined)));
  return {
    status,
    actions: snapshots.filter(
      (s): s is ActionSnapshot => s !== undefined && s.status === status && inScope(s.key, s.tenant),
    ),
    truncated: listings.some((l) => l.truncated),
  };
}
