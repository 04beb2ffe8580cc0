import { approvalScenario } from './scenario-approval';
import { emailNoKeyScenario } from './scenario-email-no-key';
import { multiAgentScenario } from './scenario-multi-agent';
import {
  ordersDatabaseScenario,
  smtpMailScenario,
  stripeChargeScenario,
  stripeKeyOnlyScenario,
} from './scenario-real-servers';
import { renewalScenario } from './scenario-renewal';
import { sagaCompensationScenario } from './scenario-saga-compensation';
import { unknownLookupScenario } from './scenario-unknown-lookup';
import type { ChaosScenario } from './types';

/**
 * Every scenario `npm run chaos -- --scenario NAME` knows. To add one: write `scenario-<name>.ts` exporting a
 * ChaosScenario (see types.ts and scenario-renewal.ts) and add it to SCENARIOS.
 */
export const SCENARIOS: readonly ChaosScenario[] = [
  renewalScenario,
  unknownLookupScenario,
  emailNoKeyScenario,
  sagaCompensationScenario,
  approvalScenario,
  multiAgentScenario,
  ordersDatabaseScenario,
  smtpMailScenario,
  stripeChargeScenario,
  stripeKeyOnlyScenario,
];

/**
 * A plain `npm run chaos` exercises every scenario on the sandbox providers; iterations are dealt out in turn. The
 * real-server scenarios are asked for by name (`--scenario orders-database`), since they need servers the sandbox
 * run does not: PostgreSQL, Mailpit, localstripe.
 */
export const DEFAULT_SCENARIOS: readonly string[] = SCENARIOS.filter((s) => !s.realServer).map((s) => s.name);

export function scenarioByName(name: string): ChaosScenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
