import { CreateTicketInput } from './schemas';
import { query, sandboxLookup, sandboxPost } from './sandbox-rest';
import { defineTool } from 'retrysafe';

/**
 * Tickets: no key, but a lookup by our external reference on a read API that lags behind writes. The
 * provider has one namespace of references for every tenant, so `externalRef` must be unique across
 * tenants (include the tenant, or derive it from the action key): another tenant's ticket with the same
 * reference would be found by the lookup and taken for this action's.
 */
export function ticketTools(baseUrl: string) {
  const createTicket = defineTool({
    name: 'create-ticket',
    version: 1,
    description: 'Open a support ticket, identified by an external reference.',
    input: CreateTicketInput,
    kind: 'mutation',
    dedupe: 'lookup',
    readAfterWriteLagMs: 3_000,
    riskClass: 'routine-message',
    summarize: (i) => `ticket "${i.title}" (${i.priority}) ref ${i.externalRef}`,
    dryRun: (i) => ({ target: `ticket ${i.externalRef}`, scope: `one ${i.priority}-priority ticket` }),
    reference: (i) => i.externalRef,
    execute: (i, ctx) => sandboxPost({ baseUrl, path: '/v1/tickets', sendsKey: false }, i, ctx),
    lookup: (i, ctx) => sandboxLookup(baseUrl, `/v1/tickets${query({ externalRef: i.externalRef })}`, ctx),
  });
  return [createTicket] as const;
}
