/**
 * The example worker (`npm run worker`): the engine with the seven example tools over the sandbox
 * providers, the example flows, the bare-charge baseline and the renewal planner (or a model).
 */
import { workerMain } from '../workers/run-worker';
import { plannerFromEnv } from './planners/from-env';
import { sandboxUrlsFromEnv } from './sandbox-env';
import { exampleTools } from './tools';
import { createBareCharge } from './activities/bare-charge';
import { killAt } from '../activities/crash-points';

workerMain((env, config) => {
  const urls = sandboxUrlsFromEnv(env);
  return {
    tools: exampleTools(urls),
    workflowsPath: require.resolve('./workflows'),
    activities: { bareCharge: createBareCharge({ paymentsUrl: urls.payments, crash: killAt(config.crashAt) }) },
    planner: plannerFromEnv(env),
  };
});
