import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import Database from 'better-sqlite3';
import pg from 'pg';

import type { ActionLedger, ClaimRecord, LedgerMigration, LedgerRow, StatusRecord } from '../../ledger';
import {
  LEDGER_MIGRATIONS,
  LEDGER_SCHEMA_VERSION,
  LedgerError,
  LedgerSchemaError,
  PostgresLedger,
  SqliteLedger,
  ledgerConfigFromEnv,
  openLedger,
} from '../../ledger';
import { openLedgerForReading } from '../../ledger/ledger-config';
import type { PostgresServer } from '../support/postgres';
import { startPostgres } from '../support/postgres';
import { waitUntil } from '../support/wait';

/**
 * One suite, run against both back ends of the durable action ledger: SQLite in a temporary file and PostgreSQL on
 * a throw-away server of this test's own. Each case gets a database of its own; `open` makes another ledger
 * instance on that same database (as a second worker would).
 */

interface TestDatabase {
  /** RETRYSAFE_LEDGER's value for this database. */
  url: string;
  /** A new, unmigrated ledger instance on this database. */
  open(options?: { migrations?: readonly LedgerMigration[] }): ActionLedger;
  /** Runs one SQL statement on the database directly (what older code wrote). */
  sql(statement: string): Promise<void>;
}

type DatabaseFactory = () => Promise<TestDatabase>;

const T0 = Date.parse('2026-08-28T09:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function claim(key: string, overrides: Partial<ClaimRecord> = {}): ClaimRecord {
  const [operation, version, tenant] = key.split(':');
  return {
    key,
    tenant: tenant ?? 'acme',
    operation: operation ?? 'charge',
    toolVersion: Number((version ?? 'v1').slice(1)),
    requestHash: `hash-of-${key}`,
    owner: 'run:acme:renewal',
    claimedAt: at(0),
    ...overrides,
  };
}

function status(key: string, seq: number, s: StatusRecord['status'], overrides: Partial<StatusRecord> = {}) {
  return { key, seq, status: s, at: at(seq), reason: `step ${seq}: ${s}`, ...overrides } satisfies StatusRecord;
}

/** The next version, which a later release might append: one index, in both dialects. */
const NEXT = LEDGER_SCHEMA_VERSION + 1;
const V_NEXT: LedgerMigration = {
  version: NEXT,
  name: 'test: an index on status',
  sqlite: ['CREATE INDEX retrysafe_actions_by_status ON retrysafe_actions (status)'],
  postgres: ['CREATE INDEX retrysafe_actions_by_status ON retrysafe_actions (status)'],
};

function ledgerSuite(name: 'sqlite' | 'postgres', makeDatabase: DatabaseFactory): void {
  describe(`action ledger on ${name}`, () => {
    const opened: ActionLedger[] = [];
    async function fresh(): Promise<{ db: TestDatabase; ledger: ActionLedger }> {
      const db = await makeDatabase();
      const ledger = track(db.open());
      await ledger.migrate();
      return { db, ledger };
    }
    function track(ledger: ActionLedger): ActionLedger {
      opened.push(ledger);
      return ledger;
    }
    after(async () => {
      await Promise.all(opened.map((l) => l.close()));
    });

    it('migrates an empty database to the code version, and a second migrate is a no-op', async () => {
      const db = await makeDatabase();
      const ledger = track(db.open());
      assert.equal(ledger.kind, name);
      assert.deepEqual(await ledger.migrate(), { from: 0, to: LEDGER_SCHEMA_VERSION });
      assert.deepEqual(await ledger.migrate(), { from: LEDGER_SCHEMA_VERSION, to: LEDGER_SCHEMA_VERSION });
      // Another instance (another worker) finds the schema in place.
      const second = track(db.open());
      assert.deepEqual(await second.migrate(), { from: LEDGER_SCHEMA_VERSION, to: LEDGER_SCHEMA_VERSION });
      assert.equal(await ledger.get('charge:v1:acme:nothing'), undefined);
      assert.deepEqual(await ledger.history({}), []);
    });

    it('two instances migrating an empty database at once both end at the code version', async () => {
      const db = await makeDatabase();
      const [a, b] = [track(db.open()), track(db.open())];
      const results = await Promise.all([a.migrate(), b.migrate()]);
      for (const r of results) assert.equal(r.to, LEDGER_SCHEMA_VERSION);
      assert.ok(results.some((r) => r.from === 0));
      await a.recordClaim(claim('charge:v1:acme:after-race'));
      assert.equal((await b.get('charge:v1:acme:after-race'))?.status, 'planned');
    });

    it('applies an appended next version, then refuses code that knows only this one with LedgerSchemaError', async () => {
      const { db, ledger } = await fresh();
      await ledger.recordClaim(claim('charge:v1:acme:kept'));
      const newer = track(db.open({ migrations: [...LEDGER_MIGRATIONS, V_NEXT] }));
      assert.deepEqual(await newer.migrate(), { from: LEDGER_SCHEMA_VERSION, to: NEXT });

      const older = track(db.open());
      await assert.rejects(older.migrate(), (err: unknown) => {
        assert.ok(err instanceof LedgerSchemaError);
        assert.equal(err.databaseVersion, NEXT);
        assert.equal(err.codeVersion, LEDGER_SCHEMA_VERSION);
        assert.match(err.message, new RegExp(`version ${NEXT}, newer than the ${LEDGER_SCHEMA_VERSION}`));
        return true;
      });
      const config = ledgerConfigFromEnv({ RETRYSAFE_LEDGER: db.url });
      assert.ok(config);
      await assert.rejects(openLedger(config), LedgerSchemaError);
      await assert.rejects(openLedger(config, { migrate: false }), LedgerSchemaError);
      // Refused, not damaged: the newer code still reads the row.
      assert.equal((await newer.get('charge:v1:acme:kept'))?.requestHash, 'hash-of-charge:v1:acme:kept');
    });

    it('a failing migration leaves the database at the version before it', async () => {
      const { db } = await fresh();
      const broken: LedgerMigration = {
        version: NEXT,
        name: 'test: fails halfway',
        sqlite: ['CREATE TABLE half_done (x INTEGER)', 'SELECT * FROM no_such_table'],
        postgres: ['CREATE TABLE half_done (x integer)', 'SELECT * FROM no_such_table'],
      };
      await assert.rejects(track(db.open({ migrations: [...LEDGER_MIGRATIONS, broken] })).migrate());
      // The table the broken migration created went with its transaction, so it can run cleanly later.
      const fixed: LedgerMigration = { ...broken, sqlite: [broken.sqlite[0]], postgres: [broken.postgres[0]] };
      assert.deepEqual(await track(db.open({ migrations: [...LEDGER_MIGRATIONS, fixed] })).migrate(), {
        from: LEDGER_SCHEMA_VERSION,
        to: NEXT,
      });
    });

    it('opens from RETRYSAFE_LEDGER with migrations, and with migrate: false only when the schema is current', async () => {
      const db = await makeDatabase();
      const config = ledgerConfigFromEnv({ RETRYSAFE_LEDGER: db.url });
      assert.equal(config?.kind, name);
      await assert.rejects(openLedger(config!, { migrate: false }), (err: unknown) => {
        assert.ok(err instanceof LedgerSchemaError);
        assert.deepEqual([err.databaseVersion, err.codeVersion], [0, LEDGER_SCHEMA_VERSION]);
        return true;
      });
      const ledger = track(await openLedger(config!));
      await ledger.recordClaim(claim('charge:v1:acme:opened'));
      const reader = track(await openLedger(config!, { migrate: false }));
      assert.equal((await reader.get('charge:v1:acme:opened'))?.status, 'planned');
    });

    it('a reader (the webhook router) waits for a worker to migrate, never migrates itself, and refuses a newer schema at once', async () => {
      const db = await makeDatabase();
      const config = ledgerConfigFromEnv({ RETRYSAFE_LEDGER: db.url })!;
      const waits: number[] = [];
      const onWaiting = (err: LedgerSchemaError) => waits.push(err.databaseVersion);
      await assert.rejects(
        openLedgerForReading(config, { waitMs: 300, pollMs: 50, onWaiting }),
        /has ledger schema version 0, older than the \d+ this code needs.*; waited 0\.3 s for a worker to migrate it$/,
      );
      assert.ok(waits.length >= 2, `looked again while it waited: ${waits.length}`);
      assert.ok(waits.every((v) => v === 0));
      await assert.rejects(
        openLedger(config, { migrate: false }),
        (err: unknown) => err instanceof LedgerSchemaError && err.databaseVersion === 0,
        'the reader changed nothing',
      );

      waits.length = 0;
      const reading = openLedgerForReading(config, { waitMs: 30_000, pollMs: 50, onWaiting });
      await waitUntil('the reader is waiting', async () => waits.length > 0);
      await track(await openLedger(config)).recordClaim(claim('charge:v1:acme:read-after-migration'));
      const reader = track(await reading);
      assert.equal((await reader.get('charge:v1:acme:read-after-migration'))?.status, 'planned');

      waits.length = 0;
      await track(db.open({ migrations: [...LEDGER_MIGRATIONS, V_NEXT] })).migrate();
      await assert.rejects(openLedgerForReading(config, { waitMs: 30_000, pollMs: 50, onWaiting }), (err: unknown) => {
        assert.ok(err instanceof LedgerSchemaError);
        assert.deepEqual([err.databaseVersion, err.codeVersion], [NEXT, LEDGER_SCHEMA_VERSION]);
        return true;
      });
      assert.deepEqual(waits, [], 'a newer schema is refused without waiting');
    });

    it('recordClaim inserts once; a second claim of the key returns the stored row unchanged', async () => {
      const { ledger } = await fresh();
      const key = 'charge:v1:acme:renewal-2026-08-28-01';
      const first = await ledger.recordClaim(claim(key));
      assert.deepEqual(first, {
        key,
        tenant: 'acme',
        operation: 'charge',
        toolVersion: 1,
        requestHash: `hash-of-${key}`,
        status: 'planned',
        owner: 'run:acme:renewal',
        claimedAt: at(0),
        updatedAt: at(0),
        seq: 0,
        epoch: 0,
      });
      const second = await ledger.recordClaim(
        claim(key, { requestHash: 'another-hash', owner: 'run:acme:other', claimedAt: at(5), toolVersion: 2 }),
      );
      assert.deepEqual(second, first, 'the stored row, with its own request hash, for the caller to compare');
      assert.deepEqual(await ledger.get(key), first);
      assert.equal((await ledger.history({})).length, 1);
    });

    it('20 concurrent claims of one key across two instances leave one row', async () => {
      const { db, ledger } = await fresh();
      const other = track(db.open());
      const key = 'refund:v1:acme:race';
      const rows = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? other : ledger).recordClaim(claim(key, { requestHash: `hash-${i}`, owner: `run:${i}` })),
        ),
      );
      const winner = rows[0];
      for (const row of rows) assert.deepEqual(row, winner);
      assert.match(winner.requestHash, /^hash-\d+$/);
      assert.equal(winner.owner, `run:${winner.requestHash.slice('hash-'.length)}`, 'one claim, whole');
      assert.equal((await other.history({})).length, 1);
    });

    it('recordStatus is idempotent per (key, seq), moves the row forward only, and settles', async () => {
      const { db, ledger } = await fresh();
      const key = 'charge:v1:acme:statuses';
      await ledger.recordClaim(claim(key));
      await ledger.recordStatus(status(key, 0, 'planned', { reason: 'intent persisted' }));
      await ledger.recordStatus(status(key, 1, 'dispatching', { by: 'worker-1' }));
      await ledger.recordStatus(status(key, 1, 'dispatching', { reason: 'a retried activity says it again' }));
      assert.equal((await ledger.audit(key)).length, 2, 'the same (key, seq) twice is one entry');

      // seq 3 arrives before seq 2 (a replay on another worker): the late, older one only fills the audit log.
      const confirmed = status(key, 3, 'confirmed', { providerRef: 'ch_1', outcome: 'confirmed: ch_1', settled: true });
      await ledger.recordStatus(confirmed);
      await ledger.recordStatus(status(key, 2, 'unknown', { outcome: 'unknown: reply lost' }));
      await track(db.open()).recordStatus(confirmed);

      const settled: LedgerRow = {
        ...claim(key),
        status: 'confirmed',
        providerRef: 'ch_1',
        outcome: 'confirmed: ch_1',
        settledAt: at(3),
        updatedAt: at(3),
        seq: 3,
        epoch: 0,
      };
      assert.deepEqual(await ledger.get(key), settled);
      assert.deepEqual(await ledger.audit(key), [
        { key, seq: 0, status: 'planned', at: at(0), reason: 'intent persisted' },
        { key, seq: 1, status: 'dispatching', at: at(1), reason: 'step 1: dispatching', by: 'worker-1' },
        { key, seq: 2, status: 'unknown', at: at(2), reason: 'step 2: unknown' },
        { key, seq: 3, status: 'confirmed', at: at(3), reason: 'step 3: confirmed' },
      ]);

      // A later, non-final status clears settledAt and keeps what it does not replace.
      await ledger.recordStatus(status(key, 4, 'compensating'));
      const compensating = await ledger.get(key);
      assert.equal(compensating?.status, 'compensating');
      assert.equal(compensating?.settledAt, undefined);
      assert.equal(compensating?.providerRef, 'ch_1');
      assert.equal(compensating?.outcome, 'confirmed: ch_1');
    });

    it('concurrent statuses from two instances end at the highest seq with every entry once', async () => {
      const { db, ledger } = await fresh();
      const other = track(db.open());
      const key = 'ship:v1:acme:busy';
      await ledger.recordClaim(claim(key));
      const seqs = [5, 1, 9, 3, 7, 2, 8, 4, 6, 10];
      await Promise.all(
        [...seqs, ...seqs].map((seq, i) =>
          (i % 2 ? other : ledger).recordStatus(status(key, seq, seq === 10 ? 'confirmed' : 'dispatching')),
        ),
      );
      const row = await ledger.get(key);
      assert.equal(row?.seq, 10);
      assert.equal(row?.status, 'confirmed');
      assert.deepEqual(
        (await other.audit(key)).map((e) => e.seq),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
    });

    it('a status for a key without a row is a LedgerError, and writes nothing', async () => {
      const { ledger } = await fresh();
      await assert.rejects(ledger.recordStatus(status('charge:v1:acme:ghost', 1, 'dispatching')), (err: unknown) => {
        assert.ok(err instanceof LedgerError);
        assert.equal(err.code, 'UnknownAction');
        return true;
      });
      assert.deepEqual(await ledger.audit('charge:v1:acme:ghost'), []);
      await assert.rejects(ledger.recordStatus({ ...status('x', 1, 'dispatching'), status: 'done' as never }), {
        code: 'InvalidRecord',
      });
      await assert.rejects(ledger.recordStatus(status('x', -1, 'dispatching')), { code: 'InvalidRecord' });
    });

    it('history filters by tenant, operation, time and status, newest first, up to a limit', async () => {
      const { ledger } = await fresh();
      const keys = [
        ['charge:v1:acme:a', 1],
        ['charge:v1:acme:b', 2],
        ['refund:v1:acme:c', 3],
        ['charge:v1:globex:d', 4],
        ['charge:v2:acme:e', 5],
      ] as const;
      for (const [key, minute] of keys) await ledger.recordClaim(claim(key, { claimedAt: at(minute) }));
      await ledger.recordStatus(status('charge:v1:acme:b', 1, 'failed', { settled: true }));
      const history = async (filter: Parameters<ActionLedger['history']>[0]) =>
        (await ledger.history(filter)).map((r) => r.key);

      assert.deepEqual(await history({}), [
        'charge:v2:acme:e',
        'charge:v1:globex:d',
        'refund:v1:acme:c',
        'charge:v1:acme:b',
        'charge:v1:acme:a',
      ]);
      assert.deepEqual(await history({ tenant: 'acme' }), [
        'charge:v2:acme:e',
        'refund:v1:acme:c',
        'charge:v1:acme:b',
        'charge:v1:acme:a',
      ]);
      assert.deepEqual(await history({ tenant: 'acme', operation: 'charge' }), [
        'charge:v2:acme:e',
        'charge:v1:acme:b',
        'charge:v1:acme:a',
      ]);
      assert.deepEqual(await history({ since: new Date(at(2)), until: new Date(at(4)) }), [
        'refund:v1:acme:c',
        'charge:v1:acme:b',
      ]);
      assert.deepEqual(await history({ status: ['failed'] }), ['charge:v1:acme:b']);
      assert.deepEqual(await history({ status: ['planned', 'failed'], limit: 2 }), [
        'charge:v2:acme:e',
        'charge:v1:globex:d',
      ]);
      assert.deepEqual(await history({ status: [] }), []);
      assert.deepEqual(await history({ tenant: 'initech' }), []);
      await assert.rejects(ledger.history({ limit: 0 }), { code: 'InvalidRecord' });
      const failed = (await ledger.history({ status: ['failed'] }))[0];
      assert.equal(failed.settledAt, at(1));
      assert.equal(failed.claimedAt, at(2));
    });

    it('migrates a schema-1 ledger to holders and alarms, keeping its rows, which anyone recording may still move', async () => {
      const db = await makeDatabase();
      const v1 = track(db.open({ migrations: LEDGER_MIGRATIONS.slice(0, 1) }));
      assert.deepEqual(await v1.migrate(), { from: 0, to: 1 });
      // As schema-1 code wrote it: no holder, no epoch.
      await db.sql(
        `INSERT INTO retrysafe_actions (action_key, tenant, operation, tool_version, request_hash, status, owner,
           claimed_at, updated_at, seq)
         VALUES ('charge:v1:acme:from-v1', 'acme', 'charge', 1, 'h', 'planned', 'run:a', '${at(0)}', '${at(0)}', 0)`,
      );
      const current = track(db.open());
      assert.deepEqual(await current.migrate(), { from: 1, to: LEDGER_SCHEMA_VERSION });
      const row = await current.get('charge:v1:acme:from-v1');
      assert.equal(row?.holder, undefined);
      assert.equal(row?.epoch, 0);
      assert.deepEqual(
        await current.recordStatus({ ...status('charge:v1:acme:from-v1', 1, 'dispatching'), holder: 'action:r1' }),
        {
          applied: true,
        },
      );
      assert.deepEqual(await current.alarms(), []);
    });

    it('claimRow creates the row for its holder, knows it again for that holder, and shows it to another', async () => {
      const { ledger } = await fresh();
      const key = 'send-email:v1:acme:holders';
      const mine = await ledger.claimRow({ ...claim(key), holder: 'action:run-1' });
      assert.equal(mine.kind, 'new');
      assert.equal(mine.row.holder, 'action:run-1');
      assert.equal(mine.row.epoch, 1);
      assert.equal((await ledger.claimRow({ ...claim(key), holder: 'action:run-1' })).kind, 'held');
      const theirs = await ledger.claimRow({ ...claim(key, { requestHash: 'another' }), holder: 'action:run-2' });
      assert.equal(theirs.kind, 'other');
      assert.equal(theirs.row.holder, 'action:run-1');
      assert.equal(theirs.row.requestHash, `hash-of-${key}`, 'the first request stays recorded');
    });

    it('claimRow with `planned` writes the row and its first entry together, and nothing for a row that exists', async () => {
      const { ledger } = await fresh();
      const key = 'send-email:v1:acme:planned-with-claim';
      const planned = { reason: 'intent persisted', outcome: 'planned: one email' };
      const first = await ledger.claimRow({ ...claim(key), holder: 'run:r/t#3.1', planned });
      assert.equal(first.kind, 'new');
      assert.equal(first.row.seq, 0);
      const entries = await ledger.audit(key);
      assert.deepEqual(
        entries.map((e) => [e.seq, e.status, e.reason, e.at]),
        [[0, 'planned', 'intent persisted', claim(key).claimedAt]],
      );
      // Another holder's claim, with its own `planned`, finds the row and writes no entry.
      const again = await ledger.claimRow({ ...claim(key), holder: 'run:r/t#4.1', planned: { reason: 'second' } });
      assert.equal(again.kind, 'other');
      assert.equal((await ledger.audit(key)).length, 1);
      // The holder's next write follows at seq 1.
      assert.deepEqual(await ledger.recordStatus({ ...status(key, 1, 'dispatching'), holder: 'run:r/t#3.1' }), {
        applied: true,
      });
      await assert.rejects(
        ledger.claimRow({ ...claim('send-email:v1:acme:bad-planned'), holder: 'h', planned: { reason: 7 as never } }),
        /planned\.reason must be a string/,
      );
    });

    it('claimRow with `planned` and `dispatching` writes the row at dispatching with both entries, in one transaction', async () => {
      const { ledger } = await fresh();
      const key = 'charge:v1:acme:dispatching-with-claim';
      const entries = {
        planned: { reason: 'intent persisted', outcome: 'planned: 24.90 EUR' },
        dispatching: { reason: 'dispatch, with the claim', outcome: 'dispatching: 24.90 EUR' },
      };
      const first = await ledger.claimRow({ ...claim(key), holder: 'run:r/t#3.1', ...entries });
      assert.equal(first.kind, 'new');
      assert.deepEqual(
        [first.row.status, first.row.seq, first.row.outcome, first.row.epoch, first.row.holder],
        ['dispatching', 1, 'dispatching: 24.90 EUR', 1, 'run:r/t#3.1'],
      );
      assert.deepEqual(
        (await ledger.audit(key)).map((e) => [e.seq, e.status, e.reason, e.at]),
        [
          [0, 'planned', 'intent persisted', claim(key).claimedAt],
          [1, 'dispatching', 'dispatch, with the claim', claim(key).claimedAt],
        ],
      );
      // A claim that finds the row writes nothing, whatever entries it carries.
      const again = await ledger.claimRow({ ...claim(key), holder: 'run:r/t#4.1', ...entries });
      assert.equal(again.kind, 'other');
      assert.equal((await ledger.audit(key)).length, 2);
      // The holder's verdict follows at seq 2, and settles the row.
      assert.deepEqual(
        await ledger.recordStatus({ ...status(key, 2, 'confirmed'), holder: 'run:r/t#3.1', settled: true }),
        { applied: true },
      );
      assert.equal((await ledger.get(key))?.status, 'confirmed');
      await assert.rejects(
        ledger.claimRow({
          ...claim('charge:v1:acme:dispatching-alone'),
          holder: 'h',
          dispatching: entries.dispatching,
        }),
        /dispatching needs planned/,
      );
      assert.equal(await ledger.get('charge:v1:acme:dispatching-alone'), undefined, 'nothing written');
    });

    it('takeOver is a compare-and-swap on the epoch: one of two takes the row, the other gets nothing', async () => {
      const { db, ledger } = await fresh();
      const other = track(db.open());
      const key = 'send-email:v1:acme:takeover';
      await ledger.claimRow({ ...claim(key), holder: 'action:first' });
      const [a, b] = await Promise.all([
        ledger.takeOver(key, 1, 'action:second', at(5)),
        other.takeOver(key, 1, 'action:third'),
      ]);
      const winners = [a, b].filter((r) => r !== undefined);
      assert.equal(winners.length, 1, 'exactly one takeover wins');
      assert.equal(winners[0]!.epoch, 2);
      assert.ok(['action:second', 'action:third'].includes(winners[0]!.holder!));
      assert.equal(await ledger.takeOver(key, 1, 'action:late'), undefined, 'a stale epoch takes nothing');
      assert.equal((await ledger.get(key))?.holder, winners[0]!.holder);
    });

    it("a takeover's first entry, `planned`, leaves a row that may have been sent at `dispatching`", async () => {
      const { ledger } = await fresh();
      const key = 'send-email:v1:acme:taken-while-dispatching';
      await ledger.claimRow({ ...claim(key), holder: 'run:act#1' });
      await ledger.recordStatus({ ...status(key, 0, 'planned'), holder: 'run:act#1' });
      await ledger.recordStatus({ ...status(key, 1, 'dispatching'), holder: 'run:act#1' });
      const taken = await ledger.takeOver(key, 1, 'action:taker');
      assert.equal(taken?.status, 'dispatching');
      // The taker numbers its entries after the row's and opens its trail with `planned`, as every action does.
      const planned = await ledger.recordStatus({ ...status(key, 2, 'planned'), holder: 'action:taker' });
      assert.deepEqual(planned, { applied: true }, 'the entry is recorded in the audit log');
      const row = await ledger.get(key);
      assert.equal(row?.status, 'dispatching', 'a row read as planned would let the next holder send fresh');
      assert.equal(row?.seq, 1);
      assert.deepEqual(
        (await ledger.audit(key)).map((e) => e.status),
        ['planned', 'dispatching', 'planned'],
      );
      // The taker's next entry moves the row as usual.
      await ledger.recordStatus({ ...status(key, 3, 'unknown'), holder: 'action:taker' });
      assert.equal((await ledger.get(key))?.status, 'unknown');
    });

    it('refuses a write from whoever does not hold the row, and a different entry under a taken seq, with alarms', async () => {
      const { ledger } = await fresh();
      const key = 'send-email:v1:acme:alarms';
      await ledger.claimRow({ ...claim(key), holder: 'action:holder' });
      const held = { ...status(key, 1, 'dispatching'), holder: 'action:holder' };
      assert.deepEqual(await ledger.recordStatus(held), { applied: true });
      assert.deepEqual(
        await ledger.recordStatus(held),
        { applied: true, repeat: true },
        'a repeat of an applied write',
      );

      const intruder = await ledger.recordStatus({ ...status(key, 2, 'confirmed'), holder: 'action:gone' });
      assert.equal(intruder.applied, false);
      assert.equal(intruder.alarm?.kind, 'not-holder');
      assert.match(
        intruder.alarm!.detail,
        /confirmed \(seq 2\) by action:gone was refused: the row is held by action:holder/,
      );

      const clash = await ledger.recordStatus({ ...status(key, 1, 'failed'), holder: 'action:holder' });
      assert.equal(clash.applied, false);
      assert.equal(clash.alarm?.kind, 'audit-conflict');
      assert.match(clash.alarm!.detail, /seq 1 holds dispatching/);

      const row = await ledger.get(key);
      assert.equal(row?.status, 'dispatching', 'neither refused write moved the row');
      assert.deepEqual(
        (await ledger.audit(key)).map((e) => e.status),
        ['dispatching'],
      );
      const alarms = await ledger.alarms({ key });
      assert.deepEqual(
        alarms.map((a) => a.kind),
        ['audit-conflict', 'not-holder'],
        'newest first',
      );
      assert.deepEqual(await ledger.alarms({ key: 'send-email:v1:acme:quiet' }), []);
      const raised = await ledger.raiseAlarm('send-email:v1:acme:quiet', 'not-holder', 'raised by hand', at(9));
      assert.deepEqual((await ledger.alarms({ limit: 1 }))[0], raised);
    });

    it('openActionStats groups the unsettled actions by tenant, operation and status, and counts alarms by kind', async () => {
      const { ledger } = await fresh();
      assert.deepEqual(await ledger.openActionStats(), {
        groups: [],
        alarms: { 'not-holder': 0, 'audit-conflict': 0, abandoned: 0 },
      });
      await ledger.recordClaim(claim('charge:v1:acme:a', { claimedAt: at(5) }));
      await ledger.recordClaim(claim('charge:v1:acme:b', { claimedAt: at(2) }));
      await ledger.recordClaim(claim('charge:v1:acme:settled', { claimedAt: at(0) }));
      await ledger.recordClaim(claim('send-email:v1:globex:c', { claimedAt: at(7) }));
      for (const key of ['charge:v1:acme:a', 'charge:v1:acme:b']) {
        await ledger.recordStatus(status(key, 1, 'dispatching'));
        await ledger.recordStatus(status(key, 2, 'unknown'));
      }
      await ledger.recordStatus(status('charge:v1:acme:settled', 1, 'dispatching'));
      await ledger.recordStatus(status('charge:v1:acme:settled', 2, 'confirmed', { settled: true }));
      await ledger.recordStatus(status('send-email:v1:globex:c', 1, 'needs_review'));
      await ledger.raiseAlarm('charge:v1:acme:a', 'audit-conflict', 'by hand', at(9));
      await ledger.raiseAlarm('charge:v1:acme:b', 'audit-conflict', 'by hand', at(9));

      const stats = await ledger.openActionStats();
      const byGroup = [...stats.groups].sort((x, y) => x.tenant.localeCompare(y.tenant));
      assert.deepEqual(byGroup, [
        { tenant: 'acme', operation: 'charge', status: 'unknown', count: 2, oldestClaimedAt: at(2) },
        { tenant: 'globex', operation: 'send-email', status: 'needs_review', count: 1, oldestClaimedAt: at(7) },
      ]);
      assert.deepEqual(stats.alarms, { 'not-holder': 0, 'audit-conflict': 2, abandoned: 0 });
      await ledger.close(); // the test server allows few connections; the suite's cases each hold a pool
    });

    if (name === 'postgres') {
      it('survives its connection being cut while checked out: the write fails, the process lives, the next one works', async () => {
        const { db, ledger } = await fresh();
        const inTransaction = ledger as unknown as {
          transaction<T>(
            fn: (
              client: NodeJS.EventEmitter & { query(sql: string): Promise<{ rows: Array<{ pid: number }> }> },
            ) => Promise<T>,
          ): Promise<T>;
        };
        // The server ends this connection between two statements, as a restart of PostgreSQL does: the client emits
        // `error` while no query is in flight, which crashed the process when nothing listened.
        await assert.rejects(
          inTransaction.transaction(async (client) => {
            const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
            // pg emits `end` on the client after the `error`s of an unexpected disconnect: once it has, the cut was seen.
            let ended = false;
            client.once('end', () => (ended = true));
            await db.sql(`SELECT pg_terminate_backend(${Number(rows[0].pid)})`);
            await waitUntil('the client to see its connection cut', () => ended, 10_000, 10);
            return client.query('SELECT 1');
          }),
        );
        const row = await ledger.recordClaim(claim('charge:v1:acme:after-cut'));
        assert.equal(row.key, 'charge:v1:acme:after-cut');
        // Its connections go back now: the test server allows few, and the next tests open their own.
        await ledger.close();
      });
    }

    it('close() releases the database: later calls fail as Closed, a second close is harmless, data stays', async () => {
      const { db, ledger } = await fresh();
      await ledger.recordClaim(claim('charge:v1:acme:durable'));
      await ledger.close();
      await ledger.close();
      await assert.rejects(ledger.get('charge:v1:acme:durable'), { name: 'LedgerError', code: 'Closed' });
      const reopened = track(db.open());
      assert.equal((await reopened.get('charge:v1:acme:durable'))?.requestHash, 'hash-of-charge:v1:acme:durable');
    });
  });
}

// ── the back ends ──

let tmp: string;
let postgres: PostgresServer | undefined;
let databases = 0;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-ledger-'));
});
after(async () => {
  await postgres?.stop();
  await rm(tmp, { recursive: true, force: true });
});

ledgerSuite('sqlite', async () => {
  // A folder that does not exist yet: the ledger makes it.
  const file = path.join(tmp, `db-${++databases}`, 'ledger.sqlite');
  return {
    url: `sqlite:${file}`,
    open: (options) => new SqliteLedger(file, options),
    sql: async (statement) => {
      const db = new Database(file);
      try {
        db.exec(statement);
      } finally {
        db.close();
      }
    },
  };
});

/** One PostgreSQL server for every case, started by the first that needs it. */
async function sharedPostgres(): Promise<PostgresServer> {
  if (!postgres) {
    // Every case keeps its ledgers open until the suite ends: room for all their pools.
    postgres = await startPostgres({ maxConnections: 100 });
    console.error(
      `# postgres from ${postgres.binaries.path} (${postgres.binaries.source}) ready in ${postgres.startupMs} ms`,
    );
  }
  return postgres;
}

ledgerSuite('postgres', async () => {
  const url = await (await sharedPostgres()).createDatabase(`ledger_${++databases}`);
  return {
    url,
    open: (options) => new PostgresLedger({ connectionString: url, ...options }),
    sql: async (statement) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    },
  };
});

describe('the ledger on PostgreSQL under a role that may only read (the webhook router)', () => {
  it('waits for the workers to migrate, reads rows, and the database refuses it any write', async () => {
    const url = await (await sharedPostgres()).createDatabase(`ledger_${++databases}`);
    const role = `webhooks_reader_${databases}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    let owner: ActionLedger | undefined;
    try {
      // As docs/production.md says: SELECT on the tables the workers' role creates, now and in later migrations.
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO ${role}`);
      const readerUrl = url.replace(/^(postgres(?:ql)?:\/\/)[^@/]+@/, `$1${role}@`);
      assert.notEqual(readerUrl, url, 'the reader connects as its own role');
      // The router starts first, on an empty database, and waits.
      let looks = 0;
      const reading = openLedgerForReading(ledgerConfigFromEnv({ RETRYSAFE_LEDGER: readerUrl })!, {
        waitMs: 30_000,
        pollMs: 50,
        onWaiting: () => looks++,
      });
      await waitUntil('the reader is waiting', () => looks > 0);
      owner = await openLedger(ledgerConfigFromEnv({ RETRYSAFE_LEDGER: url })!);
      await owner.recordClaim(claim('charge:v1:acme:read-only'));
      const reader = await reading;
      try {
        assert.equal((await reader.get('charge:v1:acme:read-only'))?.status, 'planned');
        await assert.rejects(reader.recordClaim(claim('charge:v1:acme:by-the-reader')), /permission denied/);
      } finally {
        await reader.close();
      }
      assert.equal(await owner.get('charge:v1:acme:by-the-reader'), undefined);
    } finally {
      await admin.end();
      await owner?.close();
    }
  });
});

describe('the SQLite ledger file', () => {
  it('is created with its folder, in WAL mode', async () => {
    const file = path.join(tmp, 'nested', 'deeper', 'ledger.sqlite');
    const ledger = await openLedger({ kind: 'sqlite', path: file });
    await ledger.recordClaim(claim('charge:v1:acme:file'));
    const outside = new Database(file, { readonly: true });
    try {
      assert.equal(outside.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal((outside.prepare('SELECT COUNT(*) AS n FROM retrysafe_actions').get() as { n: number }).n, 1);
    } finally {
      outside.close();
      await ledger.close();
    }
  });
});
