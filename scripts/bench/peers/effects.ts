import type { SandboxProvider } from '../../../examples/sandbox-providers/spawn';
import { recordsWhere } from '../../chaos/observe';
import { actionKeyFor, ticketRefFor } from './intents';
import type { PeerCrashInput } from './types';

/**
 * The effects one crash iteration left at its provider, counted by business reference: emails by the reference
 * they carry (the action key), tickets by their external reference. One is right; two is a duplicate.
 */
export async function effectsOf(
  providers: { email: SandboxProvider; tickets: SandboxProvider },
  input: PeerCrashInput,
): Promise<number> {
  if (input.target === 'send-email') {
    const ledger = await providers.email.ledger();
    return recordsWhere(ledger, 'messages', { reference: actionKeyFor(input, 'send-email') }).length;
  }
  const ledger = await providers.tickets.ledger();
  return recordsWhere(ledger, 'tickets', { externalRef: ticketRefFor(input.eventId) }).length;
}
