import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startStack, type Stack } from '../../scripts/lib/stack';
import {
  RESET_AFTER_COMMIT,
  replyWithheld,
  startToxiproxy,
  type Toxic,
  type ToxicProxy,
  type ToxiproxyServer,
} from '../../scripts/lib/toxiproxy-server';
import { skipWithout } from '../../scripts/lib/required-servers';
import { resolveToxiproxy } from '../../scripts/toolchain/resolve-toxiproxy';
import { missingPiece } from '../../cli/toolchain/toolchain-error';
import type { WorkerProcess } from '../../scripts/lib/worker-process';
import { ticketIntent } from '../support/intents';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';

/**
 * The network between the worker and the provider loses the reply after the provider committed: a real TCP proxy
 * (toxiproxy) between a worker process and the tickets provider process, its toxics added while the action runs.
 * The tickets provider has no key but a lookup by reference, so the action must end confirmed by that lookup, never
 * by a second create. Tickets are counted at the provider.
 */
const toxiproxy = resolveToxiproxy({ build: false }).then(
  (found) => ({ found }),
  (err: unknown) => ({ why: `toxiproxy is not here (${missingPiece(err)}): npm run setup:toolchain builds it` }),
);

describe('a provider reply lost after commit, through toxiproxy', async () => {
  const resolved = await toxiproxy;
  const skip = skipWithout('why' in resolved ? resolved.why : false);
  let stack: Stack;
  let proxyServer: ToxiproxyServer;
  let tickets: ToxicProxy;
  let worker: WorkerProcess;

  before(async () => {
    if (skip) return;
    proxyServer = await startToxiproxy({ binary: 'found' in resolved ? resolved.found.path : undefined });
    stack = await startStack({ providerKinds: ['tickets'] });
    tickets = await proxyServer.proxy('tickets', new URL(stack.providers.tickets.url).host);
    worker = await stack.startWorker({
      name: 'behind-toxiproxy',
      env: { RETRYSAFE_TICKETS_URL: `http://${tickets.host}:${tickets.port}` },
    });
  });
  after(async () => {
    await worker?.kill('SIGKILL');
    await stack?.stop();
    await proxyServer?.stop();
  });
  afterEach(async () => {
    if (!skip) await stack.providers.tickets.clearFaults();
  });

  /** Claims a ticket with `toxic` on the way back, lifts it once the provider holds the ticket, and waits. */
  async function ticketWithReplyLost(name: string, toxic: Toxic) {
    await tickets.addToxic(toxic);
    const eventId = uniqueEvent(name);
    const intent = ticketIntent(eventId);
    const { key } = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, intent);
    const held = async () =>
      ((await stack.providers.tickets.ledger()).records.tickets ?? []).filter(
        (r) => (r as { externalRef?: string }).externalRef === intent.externalRef,
      );
    try {
      // The provider committed while the worker was left without the reply; the lookup needs the path back.
      await waitUntil(`the provider to hold ${intent.externalRef}`, async () => (await held()).length > 0, 30_000);
    } finally {
      await tickets.removeToxic(toxic.name);
    }
    const action = await waitForStatus(stack.retrysafe, key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 60_000,
    });
    const ledger = await stack.providers.tickets.ledger();
    const creates = ledger.requests.filter((r) => r.reference === intent.externalRef && r.op === 'tickets.create');
    return { action, records: await held(), creates };
  }

  for (const [fault, toxic] of [
    ['the connection is reset after the provider committed', RESET_AFTER_COMMIT],
    ['the reply is withheld until the connection times out', replyWithheld(1_000)],
  ] as const) {
    it(`confirms by lookup, with one ticket, when ${fault}`, { skip }, async (t) => {
      const { action, records, creates } = await ticketWithReplyLost(toxic.name, toxic);
      const path = action.audit.map((a) => `${a.to} (${a.reason.slice(0, 60)})`).join(' > ');
      t.diagnostic(`path: ${path}; creates at the provider: ${creates.length}`);
      assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
      assert.equal(records.length, 1, 'exactly one ticket at the provider');
      assert.equal(action.providerRef, (records[0] as { id: string }).id);
      assert.equal(creates.length, 1, 'one create reached the provider: never resent');
      assert.ok(
        action.audit.some((a) => /lookup/.test(a.reason)),
        `confirmed by the lookup: ${JSON.stringify(action.audit)}`,
      );
    });
  }
});
