import type { PeerProviderUrls } from './types';

/** The base URLs a peer's service calls, from the running sandbox providers (a stack's, or a test's own). */
export function peerProviderUrls(providers: Record<keyof PeerProviderUrls, { url: string }>): PeerProviderUrls {
  return {
    payments: providers.payments.url,
    email: providers.email.url,
    tickets: providers.tickets.url,
    inventory: providers.inventory.url,
    shipping: providers.shipping.url,
  };
}
