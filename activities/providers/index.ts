import type { Operation } from '../../policies/intents';
import type { ProviderKind } from '../../policies/tool-contracts';
import { sendEmailRoute } from './email';
import { releaseRoute, reserveRoute } from './inventory';
import { chargeRoute, refundRoute } from './payments';
import type { OperationRoute } from './route';
import { createShipmentRoute } from './shipping';
import { createTicketRoute } from './tickets';

export const ROUTES: { [O in Operation]: OperationRoute<O> } = {
  charge: chargeRoute,
  refund: refundRoute,
  'send-email': sendEmailRoute,
  'create-ticket': createTicketRoute,
  reserve: reserveRoute,
  release: releaseRoute,
  'create-shipment': createShipmentRoute,
};

/** Base URLs of the providers, one per kind. */
export type ProviderUrls = Record<ProviderKind, string>;

export { providerRequest, ProviderTransportError, errorCodeFromBody, errorMessageFromBody } from './http';
export type { ProviderResponse } from './http';
export type { OperationRoute } from './route';
