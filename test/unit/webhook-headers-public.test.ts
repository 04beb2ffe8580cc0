import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { webhookHeaders } from 'retrysafe/testing';
import { createWebhookRouter, startWebhookServer } from 'retrysafe/worker';

/**
 * A team's own test of its webhook path, written with the package's entry points only: `webhookHeaders` from
 * retrysafe/testing signs a delivery that the router from retrysafe/worker accepts over HTTP, during a rotation too,
 * and the router still refuses what the helper did not sign.
 */

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const KEY = 'charge:v1:acme:order-7';

describe('webhookHeaders (retrysafe/testing) against the webhook router (retrysafe/worker)', () => {
  const current = newSecret();
  const previous = newSecret();
  const signalled: Array<{ workflowId: string; eventId: string }> = [];
  const client = {
    workflow: {
      getHandle: (workflowId: string) => ({
        signal: async (_signal: unknown, event: { eventId: string }) => {
          signalled.push({ workflowId, eventId: event.eventId });
        },
      }),
    },
  } as unknown as Client;
  const router = createWebhookRouter({ client, secrets: { payments: [current, previous] } });
  let server: Awaited<ReturnType<typeof startWebhookServer>>;
  before(async () => {
    server = await startWebhookServer(router);
  });
  after(() => server.close());

  const body = (id: string) =>
    JSON.stringify({ id, type: 'charge.succeeded', idempotencyKey: KEY, data: { id: `ch_${id}` } });
  const post = async (raw: string, headers: Record<string, string>) =>
    (await fetch(server.urlFor('payments'), { method: 'POST', headers, body: raw })).status;
  const now = () => Math.floor(Date.now() / 1000);

  it('signs deliveries the router routes: the current secret, the previous one, and both during a rotation', async () => {
    assert.equal(await post(body('evt_a'), webhookHeaders(current, 'evt_a', now(), body('evt_a'))), 202);
    assert.equal(await post(body('evt_b'), webhookHeaders(previous, 'evt_b', now(), body('evt_b'))), 202);
    const both = webhookHeaders([previous, current], 'evt_c', now(), body('evt_c'));
    assert.equal(both['webhook-signature'].split(' ').length, 2, 'one v1 signature per secret');
    assert.equal(await post(body('evt_c'), both), 202);
    assert.deepEqual(signalled, [
      { workflowId: KEY, eventId: 'evt_a' },
      { workflowId: KEY, eventId: 'evt_b' },
      { workflowId: KEY, eventId: 'evt_c' },
    ]);
  });

  it('is refused when the secret, the body or the message ID differ from what was signed', async () => {
    const before = signalled.length;
    assert.equal(await post(body('evt_d'), webhookHeaders(newSecret(), 'evt_d', now(), body('evt_d'))), 401);
    assert.equal(await post(body('evt_e'), webhookHeaders(current, 'evt_e', now(), body('evt_other'))), 401);
    const signed = webhookHeaders(current, 'evt_f', now(), body('evt_f'));
    assert.equal(await post(body('evt_f'), { ...signed, 'webhook-id': 'evt_g' }), 401);
    assert.equal(signalled.length, before, 'nothing refused reached an action');
  });
});
