/**
 * A worker for the orders-database example tool: `record-order` on the PostgreSQL that
 * RETRYSAFE_ORDERS_DATABASE_URL names (`postgres://user@host:port/db`), with the engine's workflows and the bare
 * baseline the chaos harness sets against it (the same tool in a plain activity, examples/activities/bare-tool.ts).
 *   RETRYSAFE_ORDERS_DATABASE_URL=postgres://… TEMPORAL_ADDRESS=… npx tsx examples/orders-database/worker.ts
 */
import { createBareTool } from '../activities/bare-tool';
import { ORDERS_DATABASE_ENV, ordersDatabaseTools } from './tools';
import { RetrysafeError } from 'retrysafe';
import { workerMain } from 'retrysafe/worker';
import { killAt } from 'retrysafe/testing';

workerMain((env, config) => {
  const url = env[ORDERS_DATABASE_ENV];
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    throw new RetrysafeError(
      'InvalidConfig',
      `${ORDERS_DATABASE_ENV} must be a postgres:// URL of the orders database`,
    );
  }
  const tools = ordersDatabaseTools(url);
  return {
    tools,
    workflowsPath: require.resolve('../workflows'),
    activities: { bareTool: createBareTool(tools, killAt(config.crashAt)) },
  };
});
