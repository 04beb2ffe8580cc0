import type { OperationRoute } from './route';
import { withoutOperation } from './route';

/** Email: no idempotency key, no lookup. A lost response is unknown for good; nothing may resend it. */
export const sendEmailRoute: OperationRoute<'send-email'> = {
  sendPath: '/v1/messages',
  body: withoutOperation,
  sendsKey: false,
};
