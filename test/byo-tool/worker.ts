/** The user's worker entry point: their tools, their workflows, the engine's defaults for the rest. */
import { byoTools } from './tools';
import { RetrysafeError } from 'retrysafe';
import { workerMain } from 'retrysafe/worker';

workerMain((env) => {
  if (!env.CHAT_URL || !env.LEDGER_DB) throw new RetrysafeError('InvalidConfig', 'CHAT_URL and LEDGER_DB must be set');
  return {
    tools: byoTools({ chatUrl: env.CHAT_URL, ledgerDb: env.LEDGER_DB }),
    workflowsPath: require.resolve('./workflows'),
  };
});
