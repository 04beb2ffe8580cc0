import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { LEDGER_MIGRATIONS, ledgerConfigFromEnv, openLedger } from '../../ledger';
import { openSqliteDatabase } from '../../ledger/sqlite-driver';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { SLOW_NEXT } from '../support/slow-migration';
import { waitUntil } from '../support/wait';

/**
 * A worker SIGKILLed while it migrates the ledger leaves it as it was: the migration's transaction is rolled
 * back, the data written before is intact, the schema is still the code's, and the next worker migrates cleanly.
 */
const ROOT = path.resolve(__dirname, '..', '..');

async function killMidMigration(ledgerUrl: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/slow-migration.ts')], {
    cwd: ROOT,
    env: { ...process.env, RETRYSAFE_LEDGER: ledgerUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the migrating process never started:\n${out}`)), 30_000);
    child.stdout.on('data', () => {
      if (out.includes('migrating')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // Inside the migration's transaction, well before its slow step could finish.
  await waitUntil('the child to be inside the slow migration', () => migrating(ledgerUrl), 30_000, 20);
  assert.ok(!out.includes('migrated'), `the migration finished before the kill:\n${out}`);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
}

/**
 * Whether a migration of the ledger at `ledgerUrl` is under way in another process, seen from outside it: on
 * PostgreSQL its slow step is an active query; on SQLite its transaction holds the write lock, which nothing else
 * takes here (the database is already at the code's version, so the slow migration is the first write).
 */
async function migrating(ledgerUrl: string): Promise<boolean> {
  if (ledgerUrl.startsWith('sqlite:')) {
    const db = openSqliteDatabase(ledgerUrl.slice('sqlite:'.length), { busyTimeoutMs: 0 });
    try {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      return false;
    } catch (err) {
      if (/busy|locked/i.test((err as Error).message)) return true;
      throw err;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: ledgerUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM pg_stat_activity
        WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%pg_sleep(4)%'`,
    );
    return rows[0].n > 0;
  } finally {
    await client.end();
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`the ledger survives a worker killed mid-migration (${backend})`, () => {
    let dir: string;
    let postgres: PostgresServer | undefined;
    let url: string;
    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), `retrysafe-ledger-migrate-${backend}-`));
      if (backend === 'postgres') {
        postgres = await startPostgres();
        url = postgres.url;
      } else url = `sqlite:${path.join(dir, 'ledger.sqlite')}`;
    });
    after(async () => {
      await postgres?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('rolls the migration back, keeps the rows, and migrates cleanly afterwards', async () => {
      const config = ledgerConfigFromEnv({ RETRYSAFE_LEDGER: url })!;
      const v1 = await openLedger(config);
      await v1.recordClaim({
        key: 'charge:v1:acme:before-the-crash',
        tenant: 'acme',
        operation: 'charge',
        toolVersion: 1,
        requestHash: 'a'.repeat(64),
        owner: 'client:test',
        claimedAt: '2026-12-01T10:00:00.000Z',
      });
      await v1.close();

      await killMidMigration(url);

      // The code's own version still opens it: the schema is the code's, not half of the next one.
      const after = await openLedger(config, { migrate: false });
      assert.equal((await after.get('charge:v1:acme:before-the-crash'))?.requestHash, 'a'.repeat(64));
      await after.close();
      const fast = {
        ...SLOW_NEXT,
        sqlite: ['CREATE TABLE slow_test (n INTEGER)'],
        postgres: ['CREATE TABLE slow_test (n INTEGER)'],
      };
      const next = await openLedger(config, { migrations: [...LEDGER_MIGRATIONS, fast] });
      assert.equal((await next.get('charge:v1:acme:before-the-crash'))?.status, 'planned');
      await next.close();
    });
  });
}
