/**
 * A worker for the Stripe example tool: `stripe-charge` through the `stripe` SDK on the API at
 * RETRYSAFE_STRIPE_API_BASE (default https://api.stripe.com; localstripe in the tests) with the key in
 * RETRYSAFE_STRIPE_SECRET_KEY, under the contract RETRYSAFE_STRIPE_CONTRACT names (`lookup`, the default, or
 * `idempotency-key`), with the engine's workflows and the bare baseline the chaos harness sets against it
 * (examples/activities/bare-tool.ts).
 */
import { createBareTool } from '../activities/bare-tool';
import { stripeSettingsFromEnv, stripeTools } from './tools';
import { RetrysafeError } from 'retrysafe';
import { workerMain } from 'retrysafe/worker';
import { killAt } from 'retrysafe/testing';

workerMain((env, config) => {
  let settings;
  try {
    settings = stripeSettingsFromEnv(env);
  } catch (err) {
    throw new RetrysafeError('InvalidConfig', (err as Error).message);
  }
  const tools = stripeTools(settings);
  return {
    tools,
    workflowsPath: require.resolve('../workflows'),
    activities: { bareTool: createBareTool(tools, killAt(config.crashAt)) },
  };
});
