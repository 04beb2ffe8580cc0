import type { ChargeIntent } from '../../examples/tools';

/** A charge of tenant acme's customer for the order `ord-<reference>`: the intent most integration tests claim. */
export function acmeCharge(reference: string, amountCents: number): ChargeIntent {
  return {
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: `ord-${reference}`,
  };
}
