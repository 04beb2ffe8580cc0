import { emailNoKeyScenario } from './scenario-email-no-key';
import { renewalScenario } from './scenario-renewal';
import { unknownLookupScenario } from './scenario-unknown-lookup';
import type { ChaosScenario } from './types';

/**
 * Every scenario `npm run chaos -- --scenario NAME` knows. To add one: write `scenario-<name>.ts` exporting a
 * ChaosScenario (see types.ts and scenario-renewal.ts), add it to SCENARIOS and remove its name from PLANNED.
 */
export const SCENARIOS: readonly ChaosScenario[] = [renewalScenario, unknownLookupScenario, emailNoKeyScenario];

/** Named in the issue, not written yet; asking for one says so instead of "unknown scenario". */
export const PLANNED_SCENARIOS: readonly string[] = ['saga-compensation', 'approval', 'multi-agent'];

export const DEFAULT_SCENARIOS: readonly string[] = ['renewal'];

export function scenarioByName(name: string): ChaosScenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
