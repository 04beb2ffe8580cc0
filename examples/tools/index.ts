import { emailTools } from './email';
import { inventoryTools } from './inventory';
import { paymentTools } from './payments';
import { shippingTools } from './shipping';
import { ticketTools } from './tickets';
import { createToolRegistry, type AnyTool, type IntentOf, type ToolRegistry } from 'retrysafe';

/**
 * The seven example tools over the five sandbox providers, each package given its own provider URL.
 * They use only the public tool API (policies/tool.ts, policies/tool-outcome.ts, activities/transport).
 */
export interface SandboxUrls {
  payments: string;
  email: string;
  tickets: string;
  inventory: string;
  shipping: string;
}

export function exampleTools(urls: SandboxUrls): AnyTool[] {
  return [
    ...paymentTools(urls.payments),
    ...emailTools(urls.email),
    ...ticketTools(urls.tickets),
    ...inventoryTools(urls.inventory),
    ...shippingTools(urls.shipping),
  ];
}

/** For code that only parses, hashes or describes example intents (tests, the chaos harness, the ops CLI). */
export function exampleRegistry(urls: Partial<SandboxUrls> = {}): ToolRegistry {
  const unused = 'http://127.0.0.1:9';
  return createToolRegistry(
    exampleTools({ payments: unused, email: unused, tickets: unused, inventory: unused, shipping: unused, ...urls }),
  );
}

type Tools =
  | ReturnType<typeof paymentTools>[number]
  | ReturnType<typeof emailTools>[number]
  | ReturnType<typeof ticketTools>[number]
  | ReturnType<typeof inventoryTools>[number]
  | ReturnType<typeof shippingTools>[number];
type ByName<N extends string> = IntentOf<Extract<Tools, { name: N }>>;

/** The example intents, as workflow code writes them (types only: workflow code never loads a tool). */
export type ChargeIntent = ByName<'charge'>;
export type RefundIntent = ByName<'refund'>;
export type SendEmailIntent = ByName<'send-email'>;
export type CreateTicketIntent = ByName<'create-ticket'>;
export type ReserveIntent = ByName<'reserve'>;
export type ReleaseIntent = ByName<'release'>;
export type CreateShipmentIntent = ByName<'create-shipment'>;
export type ExampleIntent = IntentOf<Tools>;
/** Every example tool, for `toolRefs<ExampleTools>()` in workflow code. */
export type ExampleTools = Tools;
export type ExampleOperation = Tools['name'];
export { APPROVED_EMAIL_TEMPLATES } from './email';
