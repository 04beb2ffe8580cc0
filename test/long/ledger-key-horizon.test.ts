import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { startSandboxProvider, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { ExampleClient } from '../../examples/client';
import { exampleRegistry } from '../../examples/tools';
import { ledgerConfigFromEnv, openLedger, type ActionLedger } from '../../ledger';
import { decisionKit } from '../support/decisions';
import type { ActionSnapshot } from '../../messages/action';
import { acmeCharge } from '../support/intents';
import { countForKey } from '../support/ledger';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { useTimeSkippingEnv, type ContractOverride } from '../support/time-skipping';
import { waitForStatus } from '../support/wait';

/**
 * The whole path, not the executor alone: a charge claimed through the client, run by the action workflow on a
 * real worker process with the durable ledger, whose worker is SIGKILLed once the provider has committed. No
 * worker runs for 25 hours (time skipped on the test server); the provider forgets the key meanwhile but keeps
 * the charge. A successor worker process must not resend under the forgotten key: the action looks the charge up
 * and confirms it, or, for a contract without a lookup, waits in needs_review for a person. Charges are counted
 * at the provider, and the ledger (SQLite, then PostgreSQL) must say what the provider holds.
 */

const tools = exampleRegistry();
const kit = decisionKit();
/** The provider's clock does not skip with the test server's: it forgets keys this soon in real time instead. */
const PROVIDER_KEY_RETENTION_MS = 500;
const DAY_AND_AN_HOUR_MS = 25 * 3_600_000;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`a charge whose worker died after the provider committed, 25 h later, ledger on ${backend} (time-skipping, real processes)`, () => {
    const harness = useTimeSkippingEnv({ exampleWorkflows: false });
    let payments: SandboxProvider;
    let postgres: PostgresServer | undefined;
    let dir: string;
    let ledgerUrl: string;
    let ledger: ActionLedger;

    before(async () => {
      payments = await startSandboxProvider('payments', { readLagMs: 0 });
      dir = await mkdtemp(path.join(os.tmpdir(), `retrysafe-ts-ledger-${backend}-`));
      if (backend === 'postgres') {
        postgres = await startPostgres();
        ledgerUrl = postgres.url;
      } else {
        ledgerUrl = `sqlite:${path.join(dir, 'ledger.sqlite')}`;
      }
      ledger = await openLedger(ledgerConfigFromEnv({ RETRYSAFE_LEDGER: ledgerUrl })!);
    });
    after(async () => {
      await ledger?.close();
      await payments?.stop();
      await postgres?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /**
     * Claims the charge through the client with worker 1 running (it SIGKILLs itself after the provider commits),
     * lets 25 hours of test-server time pass with no worker and the provider forget the key, then starts worker 2
     * and waits until the action settles or asks for a person.
     */
    async function crashThenComeBack(name: string, contracts?: Record<string, ContractOverride>) {
      const taskQueue = `ledger-horizon-${backend}-${name}`;
      const workerOptions = {
        taskQueue,
        sandboxUrls: { payments: payments.url },
        ...(contracts ? { contracts } : {}),
        env: { ...kit.workerEnv, RETRYSAFE_LEDGER: ledgerUrl },
      };
      await payments.reset();
      await payments.configure({ keyRetentionMs: PROVIDER_KEY_RETENTION_MS, readLagMs: 0 });
      const first = await harness.engineWorker({ ...workerOptions, name: 'worker-1', crashAt: 'after-commit:charge' });
      const client = new ExampleClient(harness.realTimeClient, { taskQueue, tools, ledger });
      const eventId = `${backend}-${name}`;
      const claimed = await client.claimAction({ tenant: 'acme', eventId }, acmeCharge(eventId, 4_990));
      const key = claimed.key;
      assert.equal((await first.exited).signal, 'SIGKILL', 'worker 1 died at its crash point');
      const committed = countForKey(await payments.ledger(), key);
      assert.deepEqual([committed.records, committed.committed], [1, 1], 'the provider committed the charge');

      const startedAt = await harness.env.currentTimeMs();
      await harness.outage('25h');
      const gapMs = (await harness.env.currentTimeMs()) - startedAt;
      // Let the provider's real-time retention run out, standing for the day it has had by now.
      await delay(PROVIDER_KEY_RETENTION_MS + 50);
      const second = await harness.engineWorker({ ...workerOptions, name: 'worker-2' });
      try {
        const snap = await waitForStatus(client, key, ['confirmed', 'failed', 'needs_review'], { timeoutMs: 60_000 });

        const atProvider = await payments.ledger();
        return {
          key,
          gapMs,
          snap,
          provider: countForKey(atProvider, key),
          chargeIds: (atProvider.records.charges ?? []).map((c) => (c as { id: string }).id),
          row: await ledger.get(key),
          audit: (await ledger.audit(key)).map((e) => e.status),
        };
      } finally {
        await second.stop();
      }
    }

    it(
      'confirms the charge by lookup, with one charge at the provider and the ledger agreeing',
      { timeout: 180_000 },
      async () => {
        const r = await crashThenComeBack('lookup');
        assert.ok(r.gapMs >= DAY_AND_AN_HOUR_MS, `25 h of test-server time went by (${r.gapMs} ms)`);
        assert.equal(r.snap.status, 'confirmed', JSON.stringify(r.snap.audit));
        assert.deepEqual(
          [r.provider.records, r.provider.requests, r.provider.committed],
          [1, 1, 1],
          'one charge from one request: nothing was resent under the forgotten key',
        );
        assert.deepEqual(r.chargeIds, [r.snap.providerRef]);
        assert.ok(lookedUp(r.snap), `the outcome came from a lookup: ${JSON.stringify(r.snap.requests)}`);
        assert.equal(r.row?.status, 'confirmed');
        assert.equal(r.row?.providerRef, r.snap.providerRef, 'the ledger names the charge the provider holds');
        assert.ok(
          Date.parse(r.row!.settledAt!) - Date.parse(r.row!.claimedAt) >= DAY_AND_AN_HOUR_MS,
          `the ledger settled it 25 h after the claim (${r.row!.claimedAt} → ${r.row!.settledAt})`,
        );
        assert.deepEqual(r.audit, statusesOf(r.snap), 'the ledger holds every status change, in order');
        assert.deepEqual(r.audit.slice(0, 2), ['planned', 'dispatching']);
      },
    );

    it(
      'for a contract without a lookup, waits in needs_review with one request and the ledger unresolved',
      { timeout: 180_000 },
      async () => {
        const r = await crashThenComeBack('no-lookup', { charge: { lookup: false } });
        assert.ok(r.gapMs >= DAY_AND_AN_HOUR_MS);
        assert.equal(r.snap.status, 'needs_review', JSON.stringify(r.snap.audit));
        assert.deepEqual([r.provider.records, r.provider.requests], [1, 1], 'nothing was sent again');
        assert.equal(r.row?.status, 'needs_review', 'the ledger holds it unresolved');
        assert.equal(r.row?.settledAt, undefined);
        assert.deepEqual(r.audit, statusesOf(r.snap));
        assert.deepEqual(r.audit.slice(-2), ['unknown', 'needs_review']);
        await harness.realTimeClient.workflow.getHandle(r.key).terminate('test over');
      },
    );
  });
}

/**
 * Whether a lookup found the charge: the executor's, past the key horizon (on the test server the dispatch's
 * next attempt runs when the worker is back, since it does not end a dispatch at its schedule-to-close window
 * after a retry), or the action's reconciliation (on a cluster that window ends the dispatch as `unknown`).
 */
function lookedUp(snap: ActionSnapshot): boolean {
  return (
    snap.checks.some((c) => c.kind === 'lookup' && c.found) ||
    (snap.requests ?? []).some((q) => q.kind === 'lookup' && /^found /.test(q.answer ?? ''))
  );
}

/** The statuses an action went through, as its own audit trail lists them. */
function statusesOf(snap: ActionSnapshot): string[] {
  return snap.audit.filter((a) => a.to !== a.from || a.from === undefined).map((a) => a.to);
}
