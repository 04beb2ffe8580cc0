import { SendEmailInput } from './schemas';
import { sandboxPost } from './sandbox-rest';
import { defineTool } from 'retrysafe';

/**
 * Message templates approved in advance (their wording reviewed once, like a form letter): a customer
 * email from one of these is routine contact, not free text a person must read first.
 */
export const APPROVED_EMAIL_TEMPLATES = ['dispatch-notice', 'renewal-receipt'] as const;

/**
 * Email: no idempotency key, no lookup. A lost response stays unknown unless the provider's delivery
 * webhook, which echoes our correlation reference (the action key), arrives as evidence; nothing may resend it.
 */
export function emailTools(baseUrl: string) {
  const sendEmail = defineTool({
    name: 'send-email',
    version: 1,
    description: 'Send one email to one recipient.',
    input: SendEmailInput,
    kind: 'mutation',
    dedupe: 'none',
    readAfterWriteLagMs: 0,
    riskClass: 'customer-message',
    riskClassFor: (i) =>
      i.template && (APPROVED_EMAIL_TEMPLATES as readonly string[]).includes(i.template)
        ? 'routine-message'
        : 'customer-message',
    summarize: (i) => `email "${i.subject}" to ${i.to.replace(/^(.).*@/, '$1***@')}`,
    // The recipient is shown masked; the approval's hash still binds the full address.
    dryRun: (i) => ({
      target: `recipient ${i.to.replace(/^(.).*@/, '$1***@')}`,
      scope: 'one email to one recipient; it cannot be unsent',
    }),
    // The template name is ours; the provider gets the rendered text and our key as its correlation reference.
    execute: ({ to, subject, body }, ctx) =>
      sandboxPost({ baseUrl, path: '/v1/messages', sendsKey: false }, { to, subject, body, reference: ctx.key }, ctx),
  });
  return [sendEmail] as const;
}
