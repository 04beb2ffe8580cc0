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
    stack = await startStack({ temporal: 'cluster' });
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

  it('accepts every key of deploy/temporal-dynamic-config.yaml: no service logs an unregistered key', async () => {
    const dir = path.join(cluster.dataDir, 'logs');
    const files = await readdir(dir);
    assert.deepEqual(files.sort(), CLUSTER_SERVICES.map((s) => `${s}.log`).sort());
    for (const file of files) {
      const text = await readFile(path.join(dir, file), 'utf8');
      const unregistered = text.split('\n').filter((line) => /unregistered key/i.test(line));
      assert.deepEqual(unregistered, [], `${file} warns of a dynamic config key the server does not know`);
    }
  });

  it('renews with one charge, then again with one charge across a SIGKILL of the history service', async () => {
    const first = await renew();
    assert.equal(first.result.status, 'renewed');
    assert.equal(first.charges, 1);

    const input = renewalInput(uniqueEvent('cluster-history'));
    const run = await stack.retrysafe.startRenewal(input);
    // Killed while the run is under way: once the charge is claimed, before the renewal has finished.
    await waitForStatus(stack.retrysafe, chargeKey(input.eventId), ['dispatching', 'confirmed']);
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
      const input = renewalInput(uniqueEvent(`cluster-${service}`));
      const run = await stack.retrysafe.startRenewal(input);
      await waitForStatus(stack.retrysafe, chargeKey(input.eventId), ['dispatching', 'confirmed']);
      assert.equal(await cluster.kill(service), 'SIGKILL');
      await sleep(1_000);
      await cluster.startService(service);
      const result = (await run.result()) as RenewalResult;
      assert.equal(result.status, 'renewed', service);
      const payments = await stack.providers.payments.ledger();
      assert.equal(countForKey(payments, chargeKey(input.eventId)).records, 1, `one charge across the ${service} kill`);
    }
  });

  it('loses nothing it acknowledged when PostgreSQL is killed (pg_ctl -m immediate) and renews once after', async () => {
    const before = await renew();
    assert.equal(before.result.status, 'renewed');
    const pgPid = cluster.postgres.pid;
    await cluster.restartPostgres();
    assert.notEqual(cluster.postgres.pid, pgPid, 'a new postmaster');
    // The charge acknowledged before the kill is still there, confirmed.
    const action = await stack.retrysafe.getAction(chargeKey(before.eventId));
    assert.equal(action?.status, 'confirmed', 'the charge acknowledged before the kill is still confirmed');

    const afterKill = await renew();
    assert.equal(afterKill.result.status, 'renewed');
    assert.equal(afterKill.charges, 1);
  });

  it("answers the ops CLI's and the webhook router's search-attribute queries on SQL visibility", async () => {
    const { eventId } = await renew();
    const key = chargeKey(eventId);
    // Visibility is written after the workflow's own state: wait for the listing to catch up.
    await waitUntil('the confirmed charge in visibility', async () => {
      const found = await stack.retrysafe.listActions({ status: ['confirmed'], tenant: 'acme', operation: 'charge' });
      return found.some((a) => a.key === key);
    });
    const older = await stack.retrysafe.listActions({ status: 'confirmed', olderThanMs: 0, limit: 500 });
    assert.ok(
      older.some((a) => a.key === key),
      'StartTime < … works',
    );
    const waiting = await stack.retrysafe.listWaitingRuns({ tenant: 'acme' });
    assert.ok(Array.isArray(waiting), 'IS NOT NULL on a Keyword works');
    const incomplete = await listIncompleteActions(stack.client);
    assert.ok(!incomplete.keys.some((k) => k.key === key), 'IN (…) with ExecutionStatus works and omits the closed');
  });
});
