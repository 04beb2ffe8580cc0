/**
 * The example worker (`npm run worker`): the engine with the seven example tools over the sandbox
 * providers, the example flows, the bare-charge baseline and the renewal planner (or a model).
 */
import { plannerFromEnv } from './planners/from-env';
import { sandboxUrlsFromEnv } from './sandbox-env';
import { exampleTools } from './tools';
import { createBareCharge } from './activities/bare-charge';
import { workerMain } from 'retrysafe/worker';
import { killAt } from 'retrysafe/testing';

workerMain((env, config) => {
  const urls = sandboxUrlsFromEnv(env);
  return {
    tools: exampleTools(urls),
    workflowsPath: require.resolve('./workflows'),
    activities: { bareCharge: createBareCharge({ paymentsUrl: urls.payments, crash: killAt(config.crashAt) }) },
    planner: plannerFromEnv(env),
  };
});
