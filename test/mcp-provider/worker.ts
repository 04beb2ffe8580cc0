/** A worker whose only tools are a remote MCP server's, declared in tools.ts. */
import { mcpDeskTools } from './tools';
import { RetrysafeError } from 'retrysafe';
import { workerMain } from 'retrysafe/worker';

workerMain((env) => {
  if (!env.DESK_URL || !env.KEYLESS_DESK_URL)
    throw new RetrysafeError('InvalidConfig', 'DESK_URL and KEYLESS_DESK_URL must be set');
  return { tools: mcpDeskTools({ keyed: env.DESK_URL, keyless: env.KEYLESS_DESK_URL }) };
});
