import { Collection, defineMutation } from './framework';
import type { ProviderDefinition } from './framework';
import { TicketRequest } from './resources';
import type { Ticket } from './resources';

/**
 * A helpdesk API that never dedupes: each POST opens a ticket, so a blind retry opens two. The caller's
 * only tool is the lagged search by externalRef, which may not see a ticket committed a moment ago.
 */
export function createTicketsProvider(): ProviderDefinition {
  const tickets = new Collection<Ticket>('tickets', 'tk');

  const openTicket = defineMutation({
    op: 'tickets.create',
    path: '/v1/tickets',
    schema: TicketRequest,
    decline: { status: 422, code: 'ticket_rejected', message: 'The ticket was rejected; nothing was created' },
    successStatus: 201,
    event: 'ticket.created',
    reference: (input) => input.externalRef,
    commit: (input) =>
      tickets.insert({
        object: 'ticket',
        externalRef: input.externalRef,
        title: input.title,
        body: input.body,
        priority: input.priority ?? 'normal',
        status: 'open',
      }),
  });

  return {
    kind: 'tickets',
    collections: [tickets],
    mutations: [openTicket],
    lookups: [{ path: '/v1/tickets', collection: tickets, filters: ['externalRef'] }],
    reads: [
      {
        path: '/v1/tickets/:id',
        collection: tickets,
        notFound: { status: 404, code: 'ticket_not_found', message: 'No such ticket' },
      },
    ],
  };
}
