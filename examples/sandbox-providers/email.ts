import { Collection, defineMutation } from './framework';
import type { ProviderDefinition } from './framework';
import { MessageRequest } from './resources';
import type { Message } from './resources';

/**
 * A bare transactional-email API: no idempotency key, no way to ask whether a message went out.
 * A timeout after POST leaves the caller unable to tell "sent" from "not sent"; resending may
 * duplicate. Only the admin ledger knows how many messages were really sent.
 */
export function createEmailProvider(): ProviderDefinition {
  const messages = new Collection<Message>('messages', 'msg');

  const sendMessage = defineMutation({
    op: 'messages.create',
    path: '/v1/messages',
    schema: MessageRequest,
    decline: { status: 422, code: 'recipient_rejected', message: 'The recipient was rejected; nothing was sent' },
    successStatus: 202,
    event: 'message.sent',
    reference: (input) => input.reference,
    commit: (input) =>
      messages.insert({
        object: 'message',
        to: input.to,
        subject: input.subject,
        body: input.body,
        ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
        ...(input.reference === undefined ? {} : { reference: input.reference }),
        status: 'queued',
      }),
  });

  return { kind: 'email', collections: [messages], mutations: [sendMessage], lookups: [], reads: [] };
}
