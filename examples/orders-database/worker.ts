/**
 * A worker for the orders-database example tool: `record-order` on the PostgreSQL that
 * RETRYSAFE_ORDERS_DATABASE_URL names (`postgres://user@host:port/db`), with the engine's own workflows.
 *   RETRYSAFE_ORDERS_DATABASE_URL=postgres://… TEMPORAL_ADDRESS=… npx tsx examples/orders-database/worker.ts
 */
import { SetupError, workerMain } from '../../workers/run-worker';
import { ORDERS_DATABASE_ENV, ordersDatabaseTools } from './tools';

workerMain((env) => {
  const url = env[ORDERS_DATABASE_ENV];
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    throw new SetupError(`${ORDERS_DATABASE_ENV} must be a postgres:// URL of the orders database`);
  }
  return { tools: ordersDatabaseTools(url), workflowsPath: require.resolve('../../workflows') };
});
