import type { OperationRoute } from './route';

/**
 * Email: no idempotency key, no lookup. A lost response stays unknown unless the provider's delivery
 * webhook, which echoes our correlation reference (the action key), arrives as evidence; nothing may resend it.
 */
export const sendEmailRoute: OperationRoute<'send-email'> = {
  sendPath: '/v1/messages',
  // The template name is ours; the provider gets the rendered text and our key as its correlation reference.
  body: ({ to, subject, body }, key) => ({ to, subject, body, reference: key }),
  sendsKey: false,
};
