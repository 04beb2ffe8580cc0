/**
 * The example tools as `retrysafe mcp --tools examples/tools/registered.ts` loads them: a function of the
 * environment, since each tool reads its sandbox provider's URL from it (as the example worker does). The MCP
 * server only claims, so its provider URLs may be left unset.
 */
import type { AnyTool } from 'retrysafe';
import { exampleRegistry, exampleTools, type SandboxUrls } from './index';

export const tools = (env: NodeJS.ProcessEnv): AnyTool[] | ReturnType<typeof exampleRegistry> => {
  const urls: Partial<SandboxUrls> = {
    ...(env.RETRYSAFE_PAYMENTS_URL ? { payments: env.RETRYSAFE_PAYMENTS_URL } : {}),
    ...(env.RETRYSAFE_EMAIL_URL ? { email: env.RETRYSAFE_EMAIL_URL } : {}),
    ...(env.RETRYSAFE_TICKETS_URL ? { tickets: env.RETRYSAFE_TICKETS_URL } : {}),
    ...(env.RETRYSAFE_INVENTORY_URL ? { inventory: env.RETRYSAFE_INVENTORY_URL } : {}),
    ...(env.RETRYSAFE_SHIPPING_URL ? { shipping: env.RETRYSAFE_SHIPPING_URL } : {}),
  };
  return Object.keys(urls).length === 5 ? exampleTools(urls as SandboxUrls) : exampleRegistry(urls);
};
