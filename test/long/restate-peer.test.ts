import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startSandboxProviders, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { actionKeyForStep, runWorkflowId } from '../../policies/action-key';
import { startRestatePeer, type RestatePeer } from '../../scripts/bench/peers/restate';
import type { PeerChargeInput, PeerRenewalInput } from '../../scripts/bench/peers/types';
import { countForKey, countWhere } from '../support/ledger';
import { peerProviderUrls } from '../../scripts/bench/peers/provider-urls';

/**
 * The bench's Restate peer against the sandbox providers: a real restate-server and a service process of its
 * own, both in a temporary folder. Effects are counted at the providers (their ledgers), never in what the
 * peer says.
 */
const KINDS = ['payments', 'email', 'tickets', 'inventory', 'shipping'] as const;
const TENANT = 'acme';

describe('restate peer', { timeout: 120_000 }, () => {
  let workDir: string;
  let providers: Record<(typeof KINDS)[number], SandboxProvider> & { stopAll(): Promise<void> };
  let peer: RestatePeer | undefined;
  const run = Date.now().toString(36);
  const chargeInput = (eventId: string): PeerChargeInput => ({
    tenant: TENANT,
    eventId,
    customerId: 'cus_bench',
    paymentMethod: 'pm_bench',
    amountCents: 4_990,
    currency: 'usd',
    orderId: `O-${eventId}`,
  });
  const keyOf = (eventId: string, operation: string) =>
    actionKeyForStep(runWorkflowId(TENANT, eventId), { operation, version: 1 });

  before(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-restate-peer-'));
    providers = await startSandboxProviders(KINDS);
    peer = await startRestatePeer({
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

  it('makes one charge, sent with the action key as its Idempotency-Key', async (t) => {
    const eventId = `charge-${run}`;
    const started = performance.now();
    const { chargeId } = await peer!.charge(chargeInput(eventId));
    t.diagnostic(`one charge took ${Math.round(performance.now() - started)} ms`);

    const ledger = await providers.payments.ledger();
    const key = keyOf(eventId, 'charge');
    assert.deepEqual(countForKey(ledger, key), { records: 1, requests: 1, committed: 1, replayed: 0 });
    const [record] = ledger.records.charges.filter((c) => c.merchantReference === `O-${eventId}`);
    assert.equal(record.id, chargeId);
    assert.equal(record.idempotencyKey, key);
  });

  it('attaches a second charge for the same event to the first', async () => {
    const eventId = `twice-${run}`;
    const first = await peer!.charge(chargeInput(eventId));
    const second = await peer!.charge(chargeInput(eventId));
    assert.equal(second.chargeId, first.chargeId);
    // One request at the provider: the second call never ran the step again, not even as a keyed replay.
    const counts = countForKey(await providers.payments.ledger(), keyOf(eventId, 'charge'));
    assert.deepEqual(counts, { records: 1, requests: 1, committed: 1, replayed: 0 });
  });

  it('renews with one reservation, one charge and one shipment', async () => {
    const eventId = `renewal-${run}`;
    const input: PeerRenewalInput = {
      ...chargeInput(eventId),
      sku: 'plan-annual',
      quantity: 1,
      shipTo: { line1: '1 Market St', city: 'San Francisco', postalCode: '94105', country: 'US' },
    };
    const result = await peer!.renewal(input);
    const orderId = input.orderId;
    const [inventory, payments, shipping] = await Promise.all([
      providers.inventory.ledger(),
      providers.payments.ledger(),
      providers.shipping.ledger(),
    ]);
    const reservations = inventory.records.reservations.filter((r) => r.orderId === orderId);
    const charges = payments.records.charges.filter((c) => c.merchantReference === orderId);
    const shipments = shipping.records.shipments.filter((s) => s.orderId === orderId);
    assert.deepEqual(
      [reservations.map((r) => r.id), charges.map((c) => c.id), shipments.map((s) => s.id)],
      [[result.reservationId], [result.chargeId], [result.shipmentId]],
    );
    assert.equal(reservations[0].idempotencyKey, keyOf(eventId, 'reserve'));
    assert.equal(charges[0].idempotencyKey, keyOf(eventId, 'charge'));
  });

  it('sends a second email when the service is SIGKILLed after the provider committed the first', async (t) => {
    const eventId = `email-${run}`;
    const started = performance.now();
    await peer!.crashAfterCommit({ tenant: TENANT, eventId, target: 'send-email' });
    t.diagnostic(`crash iteration took ${Math.round(performance.now() - started)} ms`);

    const crash = peer!.crashes.at(-1);
    assert.equal(crash?.crashAt, 'after-commit:send-email');
    assert.equal(crash?.exit.signal, 'SIGKILL');
    // The email provider has no key and no lookup: Restate's retry of the step is a second message.
    const key = keyOf(eventId, 'send-email');
    assert.equal(
      countWhere(await providers.email.ledger(), 'messages', (m) => m.reference === key),
      2,
    );
  });

  it('opens a second ticket when the service is SIGKILLed after the provider committed the first', async () => {
    const eventId = `ticket-${run}`;
    await peer!.crashAfterCommit({ tenant: TENANT, eventId, target: 'create-ticket' });

    assert.equal(peer!.crashes.at(-1)?.exit.signal, 'SIGKILL');
    // The ticket tool's execute is a plain POST; the lookup its contract offers is retrysafe's, not Restate's.
    const tickets = countWhere(await providers.tickets.ledger(), 'tickets', (r) => r.externalRef === `T-${eventId}`);
    assert.equal(tickets, 2);
  });
});
