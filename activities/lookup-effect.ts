import { Context } from '@temporalio/activity';
import type { Intent } from '../policies/intents';
import { contractFor } from '../policies/tool-contracts';
import { PROVIDER_REQUEST_TIMEOUT_MS } from '../policies/timeouts';
import { RetrysafeError } from '../policies/errors';
import type { ProviderUrls } from './providers';
import { ROUTES, providerRequest } from './providers';

export interface LookupResult {
  found: boolean;
  providerRef?: string;
  record?: unknown;
  detail: string;
}

/**
 * A reconciliation check: asks the provider whether the action's effect exists. Safe to repeat. The
 * caller decides whether an empty answer is trustworthy (it waits out the contract's lag first).
 */
export function createLookupEffect(deps: { providerUrls: ProviderUrls }) {
  return async function lookupEffect(input: { key: string; intent: Intent }): Promise<LookupResult> {
    const contract = contractFor(input.intent.operation);
    const route = ROUTES[input.intent.operation] as (typeof ROUTES)[keyof typeof ROUTES];
    const path = route.lookupPath?.(input.intent as never, input.key);
    if (!path) {
      throw new RetrysafeError('OutcomeUnknown', `${contract.provider} offers no lookup for ${input.intent.operation}`, {
        key: input.key,
      }).toFailure();
    }
    const res = await providerRequest({
      baseUrl: deps.providerUrls[contract.provider],
      method: 'GET',
      path,
      timeoutMs: PROVIDER_REQUEST_TIMEOUT_MS,
      signal: Context.current().cancellationSignal,
    });
    if (res.status !== 200) throw new Error(`lookup ${path} answered HTTP ${res.status}`);
    const data = (res.body as { data?: Array<{ id?: string }> }).data ?? [];
    if (data.length === 0) return { found: false, detail: `GET ${path}: empty` };
    return { found: true, providerRef: data[0].id, record: data[0], detail: `GET ${path}: ${data[0].id}${data.length > 1 ? ` (+${data.length - 1} more)` : ''}` };
  };
}
