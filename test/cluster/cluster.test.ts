import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { optionalTsToMs } from '@temporalio/common/lib/time';
import { Client as PgClient } from 'pg';

import { formatActionKey } from '../../policies/action-key';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import type { RenewalResult } from '../../examples/workflows/renewal';
import { CLUSTER_SERVICES, HISTORY_SHARDS, NAMESPACE_RETENTION_HOURS } from '../../scripts/lib/cluster-config';
import { startStack, type Stack } from '../../scripts/lib/stack';
import type { TemporalCluster } from '../../scripts/lib/temporal-cluster';
import { listIncompleteActions } from '../../workers/recovery-report';
import { acmeCharge } from '../support/intents';
import { countForKey } from '../support/ledger';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { sleep, waitForStatus, waitUntil } from '../support/wait';

const chargeKey = (eventId: string) => formatActionKey({ operation: 'charge', version: 1, tenant: 'acme', eventId });

/**
 * The real server's services, each its own process, on PostgreSQL (npm run cluster's launcher), with a worker
 * process and the sandbox providers. The suite's core files run on it too (`npm run test:cluster`); this file
 * checks what only the cluster has: its shape, and renewals across kills of its services and its database.
 */
describe('retrysafe on a multi-service Temporal cluster on PostgreSQL', () => {
  let stack: Stack;
  let cluster: TemporalCluster;

  before(async () => {
    // The ledger in the cluster's own PostgreSQL, as a deployment across hosts keeps it: its kill hits both.
    stack = await startStack({ temporal: 'cluster', ledgerOnClusterPostgres: true });
    assert.ok(stack.cluster, 'a stack on the cluster exposes it');
    cluster = stack.cluster;
    await stack.startWorker({ name: 'steady' });
  });
  after(async () => {
    await stack?.stop();
  });

  async function renew(): Promise<{ eventId: string; result: RenewalResult; charges: number }> {
    const input = renewalInput(uniqueEvent('cluster'));
    const result = (await (await stack.retrysafe.startRenewal(input)).result()) as RenewalResult;
    const charges = countForKey(await stack.providers.payments.ledger(), chargeKey(input.eventId)).records;
    return { eventId: input.eventId, result, charges };
  }

  it('runs frontend, history, matching and worker as four processes, on 4 shards, with a week of retention', async () => {
    const pids = CLUSTER_SERVICES.map((service) => cluster.pid(service));
    assert.equal(new Set(pids).size, 4, `four distinct processes: ${pids.join(', ')}`);
    for (const pid of pids) assert.doesNotThrow(() => process.kill(pid, 0), `pid ${pid} is alive`);

    const pg = new PgClient({ connectionString: cluster.postgres.url.replace(/\/postgres$/, '/temporal') });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: string }>('SELECT count(*) AS n FROM shards');
      assert.equal(Number(rows[0].n), HISTORY_SHARDS, 'every history shard is persisted in PostgreSQL');
    } finally {
      await pg.end();
    }

    const { config } = await stack.connection.workflowService.describeNamespace({ namespace: cluster.namespace });
    assert.equal(optionalTsToMs(config?.workflowExecutionRetentionTtl), NAMESPACE_RETENTION_HOURS * 3600 * 1000);
    const { customAttributes } = await stack.connection.operatorService.listSearchAttributes({
      namespace: cluster.namespace,
    });
    for (const { name } of SEARCH_ATTRIBUTE_REGISTRATIONS) assert.ok(customAttributes?.[name], `${name} registered`);
  });

  it('accepts every key and value of deploy/temporal-dynamic-config.yaml: no service logs an unregistered key or a value it could not convert', async () => {
    const dir = path.join(cluster.dataDir, 'logs');
    const files = await readdir(dir);
    assert.deepEqual(files.sort(), CLUSTER_SERVICES.map((s) => `${s}.log`).sort());
    for (const file of files) {
      const text = await readFile(path.join(dir, file), 'utf8');
      const unregistered = text.split('\n').filter((line) => /unregistered key/i.test(line));
      assert.deepEqual(unregistered, [], `${file} warns of a dynamic config key the server does not know`);
      // A value the server cannot use (text where it reads a number, a duration it cannot parse) is logged, and
      // the default is used instead. A bare number for a duration is not caught here: it is read as seconds,
      // which the dev server's args test guards against.
      const unconverted = text.split('\n').filter((line) => /failed to (convert|validate)/i.test(line));
      assert.deepEqual(unconverted, [], `${file} could not use a dynamic config value`);
    }
  });

  /**
   * Starts a renewal whose charge the payments provider commits and then holds unanswered for 3 s, and resolves once
   * it holds it: a kill now lands with the run open and the charge's outcome not yet recorded.
   */
  async function renewalWithChargeInFlight(prefix: string) {
    const input = renewalInput(uniqueEvent(prefix));
    await stack.providers.payments.setFaults([
      { op: 'charges.create', kind: 'hold-after-commit', delayMs: 3_000, times: 1 },
    ]);
    const run = await stack.retrysafe.startRenewal(input);
    await stack.providers.payments.waitForInflight((s) => s.committedButUnanswered >= 1, 30_000);
    assert.equal((await run.describe()).status.name, 'RUNNING', 'the kill lands while the run is open');
    return { input, run };
  }

  it('renews with one charge, then again with one charge across a SIGKILL of the history service', async () => {
    const first = await renew();
    assert.equal(first.result.status, 'renewed');
    assert.equal(first.charges, 1);

    const { input, run } = await renewalWithChargeInFlight('cluster-history');
    const historyPid = cluster.pid('history');
    assert.equal(await cluster.kill('history'), 'SIGKILL');
    await sleep(1_000);
    await cluster.startService('history');
    assert.notEqual(cluster.pid('history'), historyPid, 'a new history process');

    const result = (await run.result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const payments = await stack.providers.payments.ledger();
    assert.equal(countForKey(payments, chargeKey(input.eventId)).records, 1, 'one charge across the kill');
  });

  it('renews with one charge across SIGKILLs of matching and of the frontend', async () => {
    for (const service of ['matching', 'frontend'] as const) {
      const { input, run } = await renewalWithChargeInFlight(`cluster-${service}`);
      assert.equal(await cluster.kill(service), 'SIGKILL');
      await sleep(1_000);
      await cluster.startService(service);
      const result = (await run.result()) as RenewalResult;
      assert.equal(result.status, 'renewed', service);
      const payments = await stack.providers.payments.ledger();
      assert.equal(countForKey(payments, chargeKey(input.eventId)).records, 1, `one charge across the ${service} kill`);
    }
  });

  it('keeps what it acknowledged when PostgreSQL is killed (pg_ctl -m immediate) and history restarts cold', async () => {
    const input = renewalInput(uniqueEvent('cluster-postgres'));
    const run = await stack.retrysafe.startRenewal(input);
    const key = chargeKey(input.eventId);
    // Acknowledged: the charge's outcome is in its ledger row and in the run's history (its act's result), both in
    // PostgreSQL: the run acted on the row itself, so there is no action workflow.
    await waitForStatus(stack.retrysafe, key, ['confirmed'], { intervalMs: 50 });
    const pgPid = cluster.postgres.pid;
    await cluster.postgres.kill();
    await cluster.postgres.start();
    assert.notEqual(cluster.postgres.pid, pgPid, 'a new postmaster, after crash recovery');
    // A cold history reads everything back from the database instead of its caches.
    await cluster.kill('history');
    await cluster.startService('history');

    const pg = new PgClient({ connectionString: cluster.postgres.url.replace(/\/postgres$/, '/temporal') });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: string }>('SELECT count(*) AS n FROM executions WHERE workflow_id = $1', [
        run.workflowId,
      ]);
      assert.equal(Number(rows[0].n), 1, 'the run is in PostgreSQL');
    } finally {
      await pg.end();
    }
    const ledgerDb = new PgClient({
      connectionString: cluster.postgres.url.replace(/\/postgres$/, '/retrysafe_ledger'),
    });
    await ledgerDb.connect();
    try {
      const { rows } = await ledgerDb.query<{ status: string }>(
        'SELECT status FROM retrysafe_actions WHERE action_key = $1',
        [key],
      );
      assert.deepEqual(
        rows.map((r) => r.status),
        ['confirmed'],
        "the charge's ledger row survived the crash",
      );
    } finally {
      await ledgerDb.end();
    }
    const action = await stack.retrysafe.getAction(key);
    assert.equal(action?.status, 'confirmed', 'the confirmed charge survived the database crash');
    const result = (await run.result()) as RenewalResult;
    assert.equal(result.status, 'renewed');
    const payments = await stack.providers.payments.ledger();
    assert.equal(countForKey(payments, key).records, 1, 'one charge across the database crash');
  });

  it("answers the ops CLI's search-attribute queries on SQL visibility, for open and closed actions", async () => {
    const { eventId } = await renew();
    const closedKey = chargeKey(eventId);
    // 7500 cents needs a person's confirmation: the action stays open in awaiting_confirmation.
    const waiting = await stack.retrysafe.claimAction(
      { tenant: 'acme', eventId: uniqueEvent('cluster-open') },
      acmeCharge(uniqueEvent('open'), 7500),
    );
    await waitForStatus(stack.retrysafe, waiting.key, ['awaiting_confirmation']);
    // Visibility is written after the workflow's own state: wait for the listings to catch up.
    await waitUntil('both actions in visibility', async () => {
      const found = await stack.retrysafe.listActions({ tenant: 'acme', operation: 'charge' });
      return found.some((a) => a.key === closedKey) && found.some((a) => a.key === waiting.key);
    });
    const confirmed = await stack.retrysafe.listActions({ status: ['confirmed'], tenant: 'acme' });
    assert.ok(
      confirmed.some((a) => a.key === closedKey),
      "IN ('confirmed') finds the closed charge",
    );
    assert.ok(!confirmed.some((a) => a.key === waiting.key), 'and not the open one');
    const older = await stack.retrysafe.listActions({ status: 'awaiting_confirmation', olderThanMs: 0 });
    assert.ok(
      older.some((a) => a.key === waiting.key),
      'StartTime < … finds the open one',
    );
    await waitUntil('the open action among the incomplete ones', async () => {
      const incomplete = await listIncompleteActions(stack.client);
      return incomplete.keys.some((k) => k.key === waiting.key && k.status === 'awaiting_confirmation');
    });
    const incomplete = await listIncompleteActions(stack.client);
    assert.ok(!incomplete.keys.some((k) => k.key === closedKey), 'ExecutionStatus = Running leaves the closed out');
    // `RetrysafeWaitingOn IS NOT NULL` (listWaitingRuns) finds a waiting run in saga-and-interlocks.test.ts, and the
    // webhook router's reference query routes events in webhook-security.test.ts: both run here under test:cluster.
  });
});
