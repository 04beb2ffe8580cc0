import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startSandboxProviders, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { startDbos, type DbosPeer } from '../../scripts/bench/peers/dbos';
import { actionKeyFor, ticketRefFor } from '../../scripts/bench/peers/intents';
import type { PeerChargeInput, PeerRenewalInput } from '../../scripts/bench/peers/types';
import { peerProviderUrls } from '../../scripts/bench/peers/provider-urls';

/**
 * The bench's DBOS peer against the sandbox providers: its keyed charge and renewal leave one effect each at the
 * providers, and a SIGKILL after a key-less provider committed leaves the duplicate DBOS's at-least-once step
 * makes (DBOS re-runs a step whose result it had not checkpointed).
 */

const KINDS = ['payments', 'email', 'tickets', 'inventory', 'shipping'] as const;
const TENANT = 'acme';

const chargeInput = (eventId: string): PeerChargeInput => ({
  tenant: TENANT,
  eventId,
  customerId: 'cus_peer',
  paymentMethod: 'pm_peer',
  amountCents: 4990,
  currency: 'usd',
  orderId: `O-${eventId}`,
});

const renewalInput = (eventId: string): PeerRenewalInput => ({
  ...chargeInput(eventId),
  sku: 'plan-annual',
  quantity: 1,
  shipTo: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
});

const recordsWhere = async (provider: SandboxProvider, collection: string, fields: Record<string, unknown>) =>
  ((await provider.ledger()).records[collection] ?? []).filter((r) =>
    Object.entries(fields).every(([k, v]) => (r as Record<string, unknown>)[k] === v),
  );

describe('the DBOS peer (DBOS Transact on a throw-away PostgreSQL, service in its own process)', () => {
  let workDir: string;
  let providers: Awaited<ReturnType<typeof startSandboxProviders<(typeof KINDS)[number]>>> | undefined;
  let peer: DbosPeer | undefined;

  before(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-dbos-peer-'));
    providers = await startSandboxProviders(KINDS, { logDir: workDir });
    peer = await startDbos({
      providers: peerProviderUrls(providers),
      workDir,
      log: () => undefined,
    });
  });
  after(async () => {
    await peer?.stop();
    await providers?.stopAll();
    await rm(workDir, { recursive: true, force: true });
  });

  it('one keyed charge: one charge at the provider, sent with the action key as its Idempotency-Key', async (t) => {
    await peer!.charge(chargeInput('warm-up'));
    const started = performance.now();
    const { chargeId } = await peer!.charge(chargeInput('charge-1'));
    t.diagnostic(`one charge took ${(performance.now() - started).toFixed(1)} ms (after one warm-up charge)`);

    const charges = await recordsWhere(providers!.payments, 'charges', { merchantReference: 'O-charge-1' });
    assert.equal(charges.length, 1);
    assert.equal(charges[0].id, chargeId);
    assert.equal(charges[0].idempotencyKey, actionKeyFor({ tenant: TENANT, eventId: 'charge-1' }, 'charge'));
    assert.equal(charges[0].idempotencyKey, 'charge:v1:acme:charge-1');
  });

  it('charging twice for the same event attaches to the first workflow: still one charge', async () => {
    const first = await peer!.charge(chargeInput('charge-2'));
    const second = await peer!.charge(chargeInput('charge-2'));
    assert.deepEqual(second, first);
    const charges = await recordsWhere(providers!.payments, 'charges', { merchantReference: 'O-charge-2' });
    assert.equal(charges.length, 1);
    const requests = (await providers!.payments.ledger()).requests.filter(
      (r) => r.idempotencyKey === 'charge:v1:acme:charge-2',
    );
    assert.equal(requests.length, 1, 'the second start reran nothing: one request reached the provider');
  });

  it('a renewal: one reservation, one charge, one shipment, each under its own key', async () => {
    const result = await peer!.renewal(renewalInput('renewal-1'));
    const orderId = 'O-renewal-1';
    const [reservations, charges, shipments] = await Promise.all([
      recordsWhere(providers!.inventory, 'reservations', { orderId }),
      recordsWhere(providers!.payments, 'charges', { merchantReference: orderId }),
      recordsWhere(providers!.shipping, 'shipments', { orderId }),
    ]);
    assert.deepEqual(
      [reservations.length, charges.length, shipments.length],
      [1, 1, 1],
      'one reservation, charge and shipment',
    );
    assert.deepEqual(result, {
      reservationId: reservations[0].id,
      chargeId: charges[0].id,
      shipmentId: shipments[0].id,
    });
    assert.equal(reservations[0].idempotencyKey, 'reserve:v1:acme:renewal-1');
    assert.equal(charges[0].idempotencyKey, 'charge:v1:acme:renewal-1');
  });

  it('SIGKILL after the email provider committed: the service died by SIGKILL, DBOS re-ran the step, 2 emails', async () => {
    const ends = peer!.serviceEnds.length;
    await peer!.crashAfterCommit({ tenant: TENANT, eventId: 'crash-email', target: 'send-email' });

    const crashed = peer!.serviceEnds.slice(ends).find((e) => e.crashAt === 'after-commit:send-email');
    assert.ok(crashed, 'a service with the crash spec ran and ended');
    assert.equal(crashed.signal, 'SIGKILL');
    assert.notEqual(peer!.servicePid, crashed.pid, 'a restarted service recovered the workflow');
    const key = actionKeyFor({ tenant: TENANT, eventId: 'crash-email' }, 'send-email');
    const messages = await recordsWhere(providers!.email, 'messages', { reference: key });
    assert.equal(messages.length, 2, 'the honest duplicate: the provider has no key, DBOS had no checkpoint');
  });

  it('SIGKILL after the tickets provider committed: DBOS re-ran the plain POST, 2 tickets', async () => {
    const ends = peer!.serviceEnds.length;
    await peer!.crashAfterCommit({ tenant: TENANT, eventId: 'crash-ticket', target: 'create-ticket' });

    const crashed = peer!.serviceEnds.slice(ends).find((e) => e.crashAt === 'after-commit:create-ticket');
    assert.equal(crashed?.signal, 'SIGKILL');
    const tickets = await recordsWhere(providers!.tickets, 'tickets', { externalRef: ticketRefFor('crash-ticket') });
    assert.equal(tickets.length, 2, 'the tool sends no lookup before its POST; the step ran twice');
  });

  it('reports its versions and keeps serving after the crashes', async () => {
    assert.match(peer!.version, /^DBOS Transact 5\.3\.0 .*PostgreSQL \d+/);
    const { chargeId } = await peer!.charge(chargeInput('after-crashes'));
    assert.match(chargeId, /\S/);
  });
});
