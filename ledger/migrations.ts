import type { SqliteDatabase as Database } from './sqlite-driver';

import { LedgerSchemaError } from './action-ledger';

/**
 * What the migrations need of a `pg` Pool, stated here so that the package's declarations name no optional peer
 * (a team without `pg` type-checks them all the same).
 */
interface PgQueryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
}
export interface PgPool extends PgQueryable {
  connect(): Promise<PgQueryable & { release(): void }>;
}

/**
 * The ledger's schema, as numbered migrations for both dialects. A database records the versions applied to it in
 * `retrysafe_ledger_migrations`; `migrate` applies the missing ones in order, each in its own transaction together
 * with its row there, while holding a lock that a second migrating process waits for (`BEGIN IMMEDIATE` on SQLite,
 * `pg_advisory_xact_lock` on PostgreSQL). It re-reads the version under the lock, so two processes starting at
 * once apply each migration once. A database whose version is newer than the code's is refused, never touched.
 *
 * To change the schema, append a migration with the next version; never edit one that has shipped.
 */

export interface LedgerMigration {
  version: number;
  name: string;
  /** Statements run in order inside the migration's transaction. */
  sqlite: readonly string[];
  postgres: readonly string[];
}

export const MIGRATIONS_TABLE = 'retrysafe_ledger_migrations';
export const ACTIONS_TABLE = 'retrysafe_actions';
export const AUDIT_TABLE = 'retrysafe_action_audit';
export const ALARMS_TABLE = 'retrysafe_ledger_alarms';

export const LEDGER_MIGRATIONS: readonly LedgerMigration[] = [
  {
    version: 1,
    name: 'actions and their audit log',
    sqlite: [
      `CREATE TABLE ${ACTIONS_TABLE} (
        action_key   TEXT PRIMARY KEY NOT NULL,
        tenant       TEXT NOT NULL,
        operation    TEXT NOT NULL,
        tool_version INTEGER NOT NULL,
        request_hash TEXT NOT NULL,
        status       TEXT NOT NULL,
        provider_ref TEXT,
        outcome      TEXT,
        owner        TEXT NOT NULL,
        claimed_at   TEXT NOT NULL,
        settled_at   TEXT,
        updated_at   TEXT NOT NULL,
        seq          INTEGER NOT NULL
      ) STRICT`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_claimed ON ${ACTIONS_TABLE} (claimed_at)`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_tenant ON ${ACTIONS_TABLE} (tenant, claimed_at)`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_operation ON ${ACTIONS_TABLE} (operation, claimed_at)`,
      `CREATE TABLE ${AUDIT_TABLE} (
        action_key   TEXT NOT NULL REFERENCES ${ACTIONS_TABLE} (action_key),
        seq          INTEGER NOT NULL,
        status       TEXT NOT NULL,
        at           TEXT NOT NULL,
        reason       TEXT NOT NULL,
        actor        TEXT,
        provider_ref TEXT,
        outcome      TEXT,
        PRIMARY KEY (action_key, seq)
      ) STRICT`,
    ],
    postgres: [
      `CREATE TABLE ${ACTIONS_TABLE} (
        action_key   text PRIMARY KEY,
        tenant       text NOT NULL,
        operation    text NOT NULL,
        tool_version integer NOT NULL,
        request_hash text NOT NULL,
        status       text NOT NULL,
        provider_ref text,
        outcome      text,
        owner        text NOT NULL,
        claimed_at   timestamptz NOT NULL,
        settled_at   timestamptz,
        updated_at   timestamptz NOT NULL,
        seq          integer NOT NULL
      )`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_claimed ON ${ACTIONS_TABLE} (claimed_at)`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_tenant ON ${ACTIONS_TABLE} (tenant, claimed_at)`,
      `CREATE INDEX ${ACTIONS_TABLE}_by_operation ON ${ACTIONS_TABLE} (operation, claimed_at)`,
      `CREATE TABLE ${AUDIT_TABLE} (
        action_key   text NOT NULL REFERENCES ${ACTIONS_TABLE} (action_key),
        seq          integer NOT NULL,
        status       text NOT NULL,
        at           timestamptz NOT NULL,
        reason       text NOT NULL,
        actor        text,
        provider_ref text,
        outcome      text,
        PRIMARY KEY (action_key, seq)
      )`,
    ],
  },
  {
    version: 2,
    name: 'row holders with a fencing epoch, and alarms',
    sqlite: [
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN holder TEXT`,
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0`,
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN lease_until TEXT`,
      `CREATE TABLE ${ALARMS_TABLE} (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        action_key  TEXT NOT NULL,
        at          TEXT NOT NULL,
        kind        TEXT NOT NULL,
        detail      TEXT NOT NULL
      ) STRICT`,
      `CREATE INDEX ${ALARMS_TABLE}_by_at ON ${ALARMS_TABLE} (at)`,
      `CREATE INDEX ${ALARMS_TABLE}_by_key ON ${ALARMS_TABLE} (action_key)`,
    ],
    postgres: [
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN holder text`,
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN epoch integer NOT NULL DEFAULT 0`,
      `ALTER TABLE ${ACTIONS_TABLE} ADD COLUMN lease_until timestamptz`,
      `CREATE TABLE ${ALARMS_TABLE} (
        id          bigserial PRIMARY KEY,
        action_key  text NOT NULL,
        at          timestamptz NOT NULL,
        kind        text NOT NULL,
        detail      text NOT NULL
      )`,
      `CREATE INDEX ${ALARMS_TABLE}_by_at ON ${ALARMS_TABLE} (at)`,
      `CREATE INDEX ${ALARMS_TABLE}_by_key ON ${ALARMS_TABLE} (action_key)`,
    ],
  },
  {
    version: 3,
    // Every worker reads the open actions for its gauges every few seconds: a partial index keeps that read to the
    // unsettled rows however many settled ones the table holds.
    name: 'an index of the unsettled actions, for the open-action gauges',
    sqlite: [
      `CREATE INDEX ${ACTIONS_TABLE}_open ON ${ACTIONS_TABLE} (tenant, operation, status, claimed_at) ` +
        'WHERE settled_at IS NULL',
    ],
    postgres: [
      `CREATE INDEX ${ACTIONS_TABLE}_open ON ${ACTIONS_TABLE} (tenant, operation, status, claimed_at) ` +
        'WHERE settled_at IS NULL',
    ],
  },
];

/** The schema version this code writes and reads: the last migration's. */
export const LEDGER_SCHEMA_VERSION: number = LEDGER_MIGRATIONS[LEDGER_MIGRATIONS.length - 1].version;

/** The schema versions a migration found and left. */
export interface MigrationResult {
  /** The database's version before this call (0: no ledger tables yet). */
  from: number;
  to: number;
}

/** What to do next at database version `current`: nothing, refuse, or apply one migration. */
export type MigrationStep =
  { kind: 'current' } | { kind: 'newer'; error: LedgerSchemaError } | { kind: 'apply'; migration: LedgerMigration };

export function nextMigrationStep(current: number, migrations: readonly LedgerMigration[]): MigrationStep {
  const codeVersion = checkedMigrations(migrations);
  if (current > codeVersion) return { kind: 'newer', error: new LedgerSchemaError(current, codeVersion) };
  if (current === codeVersion) return { kind: 'current' };
  return { kind: 'apply', migration: migrations[current] };
}

/** The list's last version; throws unless versions run 1, 2, 3, … without gaps. */
function checkedMigrations(migrations: readonly LedgerMigration[]): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`ledger migration #${i} has version ${m.version}, expected ${i + 1}`);
  });
  return migrations.length;
}

const SQLITE_BOOTSTRAP = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version    INTEGER PRIMARY KEY NOT NULL,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

const POSTGRES_BOOTSTRAP = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** Any fixed number works; every process migrating a ledger in this database takes the same one. */
const POSTGRES_MIGRATION_LOCK = '7302415961350426113';

/** Brings a SQLite database to the code's schema version (synchronously: nothing else runs meanwhile). */
export function migrateSqlite(
  db: Database,
  migrations: readonly LedgerMigration[] = LEDGER_MIGRATIONS,
): MigrationResult {
  let from: number | undefined;
  for (;;) {
    // IMMEDIATE takes the write lock now (waiting out busy_timeout), so the version read below stays true.
    const done = db.immediate((): MigrationResult | undefined => {
      db.exec(SQLITE_BOOTSTRAP);
      const { v } = db.prepare(`SELECT COALESCE(MAX(version), 0) AS v FROM ${MIGRATIONS_TABLE}`).get() as {
        v: number;
      };
      from ??= v;
      const step = nextMigrationStep(v, migrations);
      if (step.kind === 'newer') throw step.error;
      if (step.kind === 'current') return { from, to: v };
      for (const sql of step.migration.sqlite) db.exec(sql);
      db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`).run(
        step.migration.version,
        step.migration.name,
        new Date().toISOString(),
      );
      return undefined;
    });
    if (done) return done;
  }
}

/** Brings a PostgreSQL database to the code's schema version, one locked transaction per migration. */
export async function migratePostgres(
  pool: PgPool,
  migrations: readonly LedgerMigration[] = LEDGER_MIGRATIONS,
): Promise<MigrationResult> {
  let from: number | undefined;
  const client = await pool.connect();
  try {
    for (;;) {
      await client.query('BEGIN');
      try {
        // Held until COMMIT or ROLLBACK; a second migrator waits here, then reads the version this one left.
        await client.query(`SELECT pg_advisory_xact_lock(${POSTGRES_MIGRATION_LOCK})`);
        await client.query(POSTGRES_BOOTSTRAP);
        const { rows } = await client.query<{ v: number }>(
          `SELECT COALESCE(MAX(version), 0)::integer AS v FROM ${MIGRATIONS_TABLE}`,
        );
        const v = rows[0].v;
        from ??= v;
        const step = nextMigrationStep(v, migrations);
        if (step.kind === 'newer') throw step.error;
        if (step.kind === 'current') {
          await client.query('COMMIT');
          return { from, to: v };
        }
        for (const sql of step.migration.postgres) await client.query(sql);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [
          step.migration.version,
          step.migration.name,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
  } finally {
    client.release();
  }
}

/** The schema version a SQLite ledger database holds (0: none), read without changing anything. */
export function sqliteSchemaVersion(db: Database): number {
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(MIGRATIONS_TABLE);
  if (!table) return 0;
  return (db.prepare(`SELECT COALESCE(MAX(version), 0) AS v FROM ${MIGRATIONS_TABLE}`).get() as { v: number }).v;
}

/** The schema version a PostgreSQL ledger database holds (0: none), read without changing anything. */
export async function postgresSchemaVersion(pool: PgPool): Promise<number> {
  const { rows } = await pool.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [
    MIGRATIONS_TABLE,
  ]);
  if (!rows[0].present) return 0;
  const version = await pool.query<{ v: number }>(
    `SELECT COALESCE(MAX(version), 0)::integer AS v FROM ${MIGRATIONS_TABLE}`,
  );
  return version.rows[0].v;
}
