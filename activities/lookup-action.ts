import { Context } from '@temporalio/activity';
import { RetrysafeError } from '../policies/errors';
import type { Json } from '../policies/tool';
import type { Intent, ToolRegistry } from '../policies/tool-registry';
import { verifiedInput } from './execute-action';
import { lookupOutcome, toolContext, withHeartbeat } from './provider-call';
import { withProviderSpan } from '../tracing/provider-span';
import { noRetrysafeMetrics, secondsSince, type RetrysafeMetrics } from '../metrics/instruments';

export interface LookupResult {
  found: boolean;
  providerRef?: string;
  record?: Json | null;
  detail: string;
}

/**
 * A reconciliation check: asks the tool whether the action's effect exists. Safe to repeat. The
 * workflow decides whether an empty answer is trustworthy (it waits out the contract's lag first); a
 * lookup that cannot tell throws, and the workflow asks again later.
 */
export function createLookupAction(deps: { tools: ToolRegistry; metrics?: RetrysafeMetrics }) {
  const metrics = deps.metrics ?? noRetrysafeMetrics;
  return async function lookupAction(input: {
    key: string;
    intent: Intent;
    requestHash: string;
  }): Promise<LookupResult> {
    const ctx = Context.current();
    const { tool, toolInput } = verifiedInput(deps.tools, input);
    if (!tool.lookup) {
      throw new RetrysafeError('OutcomeUnknown', `${tool.name} offers no lookup`, { key: input.key }).toFailure();
    }
    const askedAtMs = Date.now();
    let answer;
    try {
      answer = await withHeartbeat(ctx, () =>
        withProviderSpan(
          tool.name,
          'lookup',
          () => tool.lookup!(toolInput, toolContext(ctx, input.key)),
          lookupOutcome,
        ),
      );
    } catch (err) {
      metrics.providerRequest(tool.name, 'lookup', 'failed', secondsSince(askedAtMs));
      throw err;
    }
    metrics.providerRequest(tool.name, 'lookup', lookupOutcome(answer), secondsSince(askedAtMs));
    if (!answer.found) return { found: false, detail: `${tool.name} lookup: ${answer.detail ?? 'empty'}` };
    return {
      found: true,
      providerRef: answer.providerRef,
      record: answer.result ?? null,
      detail: `${tool.name} lookup: ${answer.detail ?? answer.providerRef}`,
    };
  };
}
