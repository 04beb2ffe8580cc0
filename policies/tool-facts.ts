import { RetrysafeError } from './errors';
import type { Intent, ToolDescriptor } from './tool';

/**
 * What workflow code reads off an intent through its tool's descriptor, without knowing the tool:
 * the amount the decision table, the spend ceiling and the per-action limits look at, and the limits.
 */
export function amountOf(tool: ToolDescriptor, intent: Intent): number | undefined {
  const value = tool.amountField ? intent[tool.amountField] : undefined;
  return typeof value === 'number' ? value : undefined;
}

export function currencyOf(tool: ToolDescriptor, intent: Intent): string | undefined {
  const value = tool.currencyField ? intent[tool.currencyField] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks the tool's per-action limits on the fields it names. A breach is `CeilingReached`: the action
 * waits for a human, it is not silently clipped or retried.
 */
export function checkToolLimits(tool: ToolDescriptor, intent: Intent): void {
  for (const [field, { max }] of Object.entries(tool.limits)) {
    const value = intent[field];
    if (typeof value === 'number' && value > max) {
      throw new RetrysafeError(
        'CeilingReached',
        `${tool.name}: ${field} ${value} is above the per-action limit ${max}`,
        { field, limit: max, value },
      );
    }
  }
}
