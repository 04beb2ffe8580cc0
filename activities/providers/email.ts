import type { OperationRoute } from './route';
import { withoutOperation } from './route';

/**
 * Email: no idempotency key, no lookup. A lost response stays unknown unless the provider's delivery
 * webhook, which echoes our correlation reference (the action key), arrives as evidence; nothing may resend it.
 */
export const sendEmailRoute: OperationRoute<'send-email'> = {
  sendPath: '/v1/messages',
  body: (intent, key) => ({ ...withoutOperation(intent), reference: key }),
  sendsKey: false,
};
