import { z } from 'zod';
import type { SandboxUrls } from './tools';
import { RetrysafeError } from 'retrysafe';

/** The example tools' own settings: one URL per sandbox provider, read at the entry point. */
const url = (name: string) => z.url({ message: `${name} must be an http(s) URL, e.g. http://127.0.0.1:4101` });
export const SandboxEnv = z.object({
  RETRYSAFE_PAYMENTS_URL: url('RETRYSAFE_PAYMENTS_URL'),
  RETRYSAFE_EMAIL_URL: url('RETRYSAFE_EMAIL_URL'),
  RETRYSAFE_TICKETS_URL: url('RETRYSAFE_TICKETS_URL'),
  RETRYSAFE_INVENTORY_URL: url('RETRYSAFE_INVENTORY_URL'),
  RETRYSAFE_SHIPPING_URL: url('RETRYSAFE_SHIPPING_URL'),
});

export function sandboxUrlsFromEnv(env: NodeJS.ProcessEnv): SandboxUrls {
  const parsed = SandboxEnv.safeParse(env);
  if (!parsed.success) {
    throw new RetrysafeError(
      'InvalidConfig',
      `invalid example tool configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`,
    );
  }
  const e = parsed.data;
  return {
    payments: e.RETRYSAFE_PAYMENTS_URL,
    email: e.RETRYSAFE_EMAIL_URL,
    tickets: e.RETRYSAFE_TICKETS_URL,
    inventory: e.RETRYSAFE_INVENTORY_URL,
    shipping: e.RETRYSAFE_SHIPPING_URL,
  };
}

/** The environment a worker needs for a set of sandbox URLs (used by launchers and tests). */
export function sandboxUrlsToEnv(urls: SandboxUrls): Record<string, string> {
  return {
    RETRYSAFE_PAYMENTS_URL: urls.payments,
    RETRYSAFE_EMAIL_URL: urls.email,
    RETRYSAFE_TICKETS_URL: urls.tickets,
    RETRYSAFE_INVENTORY_URL: urls.inventory,
    RETRYSAFE_SHIPPING_URL: urls.shipping,
  };
}
