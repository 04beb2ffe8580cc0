import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';

import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import type { DevServer } from '../../cli/dev/dev-server';
import { MIN_RETENTION_SECONDS, startDevServer, webUiWorkflowUrl } from '../../cli/dev/dev-server';
import type { EchoActivities } from '../support/fixtures/echo-workflow';
import { echoWorkflow, peekUpdate } from '../support/fixtures/echo-workflow';

const { IndexedValueType } = temporal.api.enums.v1;
const INDEXED_TYPE: Record<(typeof SEARCH_ATTRIBUTE_REGISTRATIONS)[number]['type'], number> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

// The worker's INFO lines (bundle sizes, state changes) would bury the test report; warnings still show.
Runtime.install({ logger: new DefaultLogger('WARN') });

const activities: EchoActivities = { shout: async (text) => text.toUpperCase() };

describe('dev server on a SQLite file', () => {
  let dir: string;
  let server: DevServer | undefined;
  const serverLog: string[] = [];
  const taskQueue = `dev-server-persistence-${randomUUID()}`;
  const workflowId = `echo-${randomUUID()}`;
  let historyBeforeRestart: string[] = [];

  async function withClient<T>(fn: (client: Client, connection: Connection) => Promise<T>): Promise<T> {
    assert.ok(server, 'dev server did not start');
    const connection = await Connection.connect({ address: server.address });
    try {
      return await fn(new Client({ connection, namespace: server.namespace }), connection);
    } finally {
      await connection.close();
    }
  }

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-dev-server-'));
    server = await startDevServer({
      dbFile: path.join(dir, 'temporal.sqlite'),
      port: 0,
      uiPort: null,
      logFile: path.join(dir, 'temporal-server.log'),
      log: (msg) => serverLog.push(msg),
    });
  });

  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a workflow and an update-with-start end to end on a real worker', async (t) => {
    assert.ok(server);
    for (const line of serverLog) t.diagnostic(line);
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await Worker.create({
        connection,
        namespace: server.namespace,
        taskQueue,
        workflowsPath: require.resolve('../support/fixtures/echo-workflow'),
        activities,
      });
      await worker.runUntil(
        withClient(async (client) => {
          const result = await client.workflow.execute(echoWorkflow, { workflowId, taskQueue, args: ['hello'] });
          assert.equal(result, 'echo: HELLO');

          const startOperation = new WithStartWorkflowOperation(echoWorkflow, {
            workflowId: `${workflowId}-uws`,
            taskQueue,
            args: ['update-with-start'],
            workflowIdConflictPolicy: 'USE_EXISTING',
          });
          const peeked = await client.workflow.executeUpdateWithStart(peekUpdate, {
            startWorkflowOperation: startOperation,
          });
          assert.equal(peeked, 'update-with-start');
          assert.equal(await (await startOperation.workflowHandle()).result(), 'echo: UPDATE-WITH-START');

          historyBeforeRestart = await eventsOf(client, workflowId);
        }),
      );
    } finally {
      await connection.close();
    }
    assert.ok(historyBeforeRestart.length >= 11, `expected a full history, got ${historyBeforeRestart.length} events`);
  });

  it('keeps history and result across a restart on the same SQLite file', async (t) => {
    assert.ok(server);
    const pidBefore = server.pid;
    const started = Date.now();
    await server.restart();
    t.diagnostic(`restart (stop + start on the existing database) took ${Date.now() - started} ms`);
    assert.notEqual(server.pid, pidBefore, 'restart should run a new server process');
    assert.ok(existsSync(`${server.dbFile}-wal`), 'the SQLite file should be in WAL mode');

    await withClient(async (client) => {
      assert.deepEqual(await eventsOf(client, workflowId), historyBeforeRestart);
      const handle = client.workflow.getHandle(workflowId);
      assert.equal(await handle.result(), 'echo: HELLO');
      assert.equal((await handle.describe()).status.name, 'COMPLETED');
    });
  });

  it('has retrysafe search attributes registered after the restart', async () => {
    await withClient(async (_client, connection) => {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace: server?.namespace,
      });
      for (const { name, type } of SEARCH_ATTRIBUTE_REGISTRATIONS) {
        assert.equal(customAttributes?.[name], INDEXED_TYPE[type], `search attribute ${name} should be ${type}`);
      }
    });
  });

  it('keeps namespace retention at 7 days or more after the restart', async () => {
    await withClient(async (_client, connection) => {
      const { config } = await connection.workflowService.describeNamespace({ namespace: server?.namespace });
      const seconds = (optionalTsToMs(config?.workflowExecutionRetentionTtl) ?? 0) / 1000;
      assert.ok(seconds >= MIN_RETENTION_SECONDS, `retention is ${seconds} s, expected >= ${MIN_RETENTION_SECONDS} s`);
    });
  });
});

describe('webUiWorkflowUrl', () => {
  it('links to the latest run, or to a given run, and to nothing when the server is headless', () => {
    const server = { uiUrl: 'http://127.0.0.1:8233', namespace: 'default' };
    const key = 'charge:v1:acme:renewal-2026-08-28-01';
    assert.equal(
      webUiWorkflowUrl(server, key),
      'http://127.0.0.1:8233/namespaces/default/workflows/charge%3Av1%3Aacme%3Arenewal-2026-08-28-01',
    );
    assert.equal(
      webUiWorkflowUrl(server, 'run:acme:e1', 'r-1'),
      'http://127.0.0.1:8233/namespaces/default/workflows/run%3Aacme%3Ae1/r-1/history',
    );
    assert.equal(webUiWorkflowUrl({ namespace: 'default' }, key), undefined);
  });
});

/** The history as comparable JSON lines, one per event (protobuf messages serialize deterministically). */
async function eventsOf(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((event) => JSON.stringify(event));
}
