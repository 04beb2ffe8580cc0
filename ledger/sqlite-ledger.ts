import { mkdirSync } from 'node:fs';
import path from 'node:path';

import type {
  ActionLedger,
  ClaimRecord,
  HistoryFilter,
  LedgerAlarm,
  LedgerAlarmKind,
  LedgerAuditEntry,
  LedgerRow,
  RowClaim,
  RowClaimRecord,
  StatusRecord,
  StatusWrite,
} from './action-ledger';
import {
  ALARM_KINDS_SQL,
  OPEN_ACTION_GROUPS_SQL,
  openActionStatsOf,
  type OpenActionStats,
  LedgerConfigError,
  LedgerError,
  alarmLimit,
  auditConflictDetail,
  checkedClaim,
  checkedRowClaim,
  claimEntryValues,
  newRowStanding,
  rowClaimValues,
  checkedStatus,
  historyQuery,
  isoTime,
  notHolderDetail,
  sameAuditEntry,
  entryMovesRow,
} from './action-ledger';
import {
  ALARM_COLUMNS,
  ROW_COLUMNS,
  toAlarm,
  toAuditEntry,
  toRow,
  unknownAction,
  type ActionRowRecord,
  type AlarmRowRecord,
  type AuditRowRecord,
} from './ledger-rows';
import type { LedgerMigration, MigrationResult } from './migrations';
import { sharedFilesystemProblem } from './sqlite-placement';
import { openSqliteDatabase, type SqliteDatabase } from './sqlite-driver';
import {
  ACTIONS_TABLE,
  ALARMS_TABLE,
  AUDIT_TABLE,
  LEDGER_MIGRATIONS,
  sqliteSchemaVersion,
  migrateSqlite,
} from './migrations';

/**
 * The ledger in one SQLite file (node:sqlite or better-sqlite3): WAL journal, so readers never wait for the writer;
 * `synchronous=FULL`, so a write is on disk when it returns and survives a power cut, not only a crashed process
 * (the record-first path reads a row still `planned` as "nothing was sent": that `dispatching` must not be lost);
 * a busy timeout, so several workers on one machine may share the file and wait for each other's writes; and a
 * refusal to open a file on a network filesystem, whose locks do not hold between machines.
 * Times are stored as canonical ISO strings, which sort as the times they name.
 */

export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** How long a writer waits for another's lock (5 s by default), and the schema to migrate to. */
export interface SqliteLedgerOptions {
  busyTimeoutMs?: number;
  /** The schema to migrate to; tests pass a longer list to play a newer release. */
  migrations?: readonly LedgerMigration[];
}

/** The ledger in a SQLite file (WAL mode), for the workers of one machine; on node:sqlite or better-sqlite3. */
export class SqliteLedger implements ActionLedger {
  readonly kind = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly migrations: readonly LedgerMigration[];

  /** Opens (creating it and its folder when missing) the ledger file; `:memory:` for a private in-memory one. */
  constructor(
    readonly file: string,
    options: SqliteLedgerOptions = {},
  ) {
    const busyTimeoutMs = options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
    this.migrations = options.migrations ?? LEDGER_MIGRATIONS;
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const shared = sharedFilesystemProblem(file);
    if (shared) throw new LedgerConfigError(shared);
    this.db = openSqliteDatabase(file, { busyTimeoutMs });
    try {
      this.db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = FULL');
      this.db.exec('PRAGMA foreign_keys = ON');
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  async migrate(): Promise<MigrationResult> {
    return migrateSqlite(this.open(), this.migrations);
  }

  /** The schema version the database holds (0: no ledger yet), without changing it. */
  async schemaVersion(): Promise<number> {
    return sqliteSchemaVersion(this.open());
  }

  /** @internal the engine's write: see ActionLedger. */
  async recordClaim(claim: ClaimRecord): Promise<LedgerRow> {
    const c = checkedClaim(claim);
    const db = this.open();
    db.prepare(
      `INSERT INTO ${ACTIONS_TABLE} (action_key, tenant, operation, tool_version, request_hash, status, owner,
         claimed_at, updated_at, seq)
       VALUES (?, ?, ?, ?, ?, 'planned', ?, ?, ?, 0)
       ON CONFLICT (action_key) DO NOTHING`,
    ).run(c.key, c.tenant, c.operation, c.toolVersion, c.requestHash, c.owner, c.claimedAt, c.claimedAt);
    const row = this.select(c.key);
    if (!row) throw new Error(`the ledger lost the row of ${c.key} it just wrote`);
    return row;
  }

  /** @internal the engine's write: see ActionLedger. */
  async claimRow(claim: RowClaimRecord): Promise<RowClaim> {
    const c = checkedRowClaim(claim);
    const values = rowClaimValues(c);
    const standing = newRowStanding(c);
    const db = this.open();
    return db.immediate((): RowClaim => {
      const inserted = db
        .prepare(
          `INSERT INTO ${ACTIONS_TABLE} (action_key, tenant, operation, tool_version, request_hash, owner,
               claimed_at, holder, lease_until, updated_at, status, seq, outcome, epoch)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
             ON CONFLICT (action_key) DO NOTHING`,
        )
        // updated_at takes the claim's time too.
        .run(...values, c.claimedAt, standing.status, standing.seq, standing.outcome);
      const created = Number(inserted.changes) === 1;
      if (created) {
        for (const entry of claimEntryValues(c)) {
          db.prepare(
            `INSERT INTO ${AUDIT_TABLE} (action_key, seq, status, at, reason, actor, provider_ref, outcome)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(...entry);
        }
      }
      const row = this.select(c.key)!;
      if (created) return { kind: 'new', row };
      return { kind: row.holder === c.holder ? 'held' : 'other', row };
    });
  }

  /** @internal the engine's write: see ActionLedger. */
  async takeOver(key: string, epoch: number, holder: string, leaseUntil?: string): Promise<LedgerRow | undefined> {
    const lease = leaseUntil === undefined ? null : isoTime(leaseUntil, 'leaseUntil');
    const moved = this.open()
      .prepare(
        `UPDATE ${ACTIONS_TABLE} SET holder = ?, epoch = epoch + 1, lease_until = ? WHERE action_key = ? AND epoch = ?`,
      )
      .run(holder, lease, key, epoch);
    return Number(moved.changes) === 1 ? this.select(key) : undefined;
  }

  /** @internal the engine's write: see ActionLedger. */
  async recordStatus(update: StatusRecord & { holder?: string }): Promise<StatusWrite> {
    const u = checkedStatus(update);
    const db = this.open();
    // IMMEDIATE: take the write lock before reading, so a second writer waits rather than failing to upgrade.
    return db.immediate((): StatusWrite => {
      const current = db.prepare(`SELECT seq, status, holder FROM ${ACTIONS_TABLE} WHERE action_key = ?`).get(u.key) as
        { seq: number; status: string; holder: string | null } | undefined;
      if (!current) throw unknownAction(u.key);
      if (update.holder !== undefined && current.holder !== null && current.holder !== update.holder) {
        return {
          applied: false,
          alarm: this.alarm(u.key, 'not-holder', notHolderDetail(update, current.holder), u.at),
        };
      }
      const inserted = db
        .prepare(
          `INSERT INTO ${AUDIT_TABLE} (action_key, seq, status, at, reason, actor, provider_ref, outcome)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (action_key, seq) DO NOTHING`,
        )
        .run(u.key, u.seq, u.status, u.at, u.reason, u.by ?? null, u.providerRef ?? null, u.outcome ?? null);
      if (Number(inserted.changes) !== 1) {
        const existing = db
          .prepare(`SELECT status, reason FROM ${AUDIT_TABLE} WHERE action_key = ? AND seq = ?`)
          .get(u.key, u.seq) as { status: string; reason: string };
        if (sameAuditEntry(u, existing)) return { applied: true, repeat: true };
        return { applied: false, alarm: this.alarm(u.key, 'audit-conflict', auditConflictDetail(u, existing), u.at) };
      }
      if (!entryMovesRow(u, current)) return { applied: true };
      db.prepare(
        `UPDATE ${ACTIONS_TABLE}
              SET status = ?, seq = ?, provider_ref = COALESCE(?, provider_ref), outcome = COALESCE(?, outcome),
                  settled_at = ?, updated_at = ?
            WHERE action_key = ?`,
      ).run(u.status, u.seq, u.providerRef ?? null, u.outcome ?? null, u.settled ? u.at : null, u.at, u.key);
      return { applied: true };
    });
  }

  /** @internal the engine's write: see ActionLedger. */
  async raiseAlarm(key: string, kind: LedgerAlarmKind, detail: string, at?: string): Promise<LedgerAlarm> {
    return this.alarm(key, kind, detail, at === undefined ? new Date().toISOString() : isoTime(at, 'at'));
  }

  async openActionStats(): Promise<OpenActionStats> {
    const db = this.open();
    const groups = db.prepare(OPEN_ACTION_GROUPS_SQL(ACTIONS_TABLE)).all() as Array<{
      tenant: string;
      operation: string;
      status: string;
      n: number;
      oldest: string;
    }>;
    const alarms = db.prepare(ALARM_KINDS_SQL(ALARMS_TABLE)).all() as Array<{ kind: string; n: number }>;
    return openActionStatsOf(groups, alarms, ISO);
  }

  async alarms(filter: { key?: string; limit?: number } = {}): Promise<LedgerAlarm[]> {
    const limit = alarmLimit(filter.limit);
    const rows = (
      filter.key === undefined
        ? this.open().prepare(`SELECT ${ALARM_COLUMNS} FROM ${ALARMS_TABLE} ORDER BY id DESC LIMIT ?`).all(limit)
        : this.open()
            .prepare(`SELECT ${ALARM_COLUMNS} FROM ${ALARMS_TABLE} WHERE action_key = ? ORDER BY id DESC LIMIT ?`)
            .all(filter.key, limit)
    ) as AlarmRowRecord<string>[];
    return rows.map((r) => toAlarm(r, ISO));
  }

  private alarm(key: string, kind: LedgerAlarmKind, detail: string, at: string): LedgerAlarm {
    const { lastInsertRowid } = this.open()
      .prepare(`INSERT INTO ${ALARMS_TABLE} (action_key, at, kind, detail) VALUES (?, ?, ?, ?)`)
      .run(key, at, kind, detail);
    return { id: Number(lastInsertRowid), key, at, kind, detail };
  }

  /** The key's row, or undefined when the ledger has never seen the key. */
  async get(key: string): Promise<LedgerRow | undefined> {
    return this.select(key);
  }

  async audit(key: string): Promise<LedgerAuditEntry[]> {
    const rows = this.open()
      .prepare(
        `SELECT action_key, seq, status, at, reason, actor FROM ${AUDIT_TABLE} WHERE action_key = ? ORDER BY seq`,
      )
      .all(key) as AuditRowRecord<string>[];
    return rows.map((r) => toAuditEntry(r, ISO));
  }

  async history(filter: HistoryFilter): Promise<LedgerRow[]> {
    const q = historyQuery(filter, () => '?');
    if (q.none) return [];
    const rows = this.open()
      .prepare(
        `SELECT ${ROW_COLUMNS} FROM ${ACTIONS_TABLE} ${q.where}
          ORDER BY claimed_at DESC, action_key DESC
          LIMIT ?`,
      )
      .all(...q.params, q.limit) as ActionRowRecord<string>[];
    return rows.map((r) => toRow(r, ISO));
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }

  private select(key: string): LedgerRow | undefined {
    const row = this.open().prepare(`SELECT ${ROW_COLUMNS} FROM ${ACTIONS_TABLE} WHERE action_key = ?`).get(key) as
      ActionRowRecord<string> | undefined;
    return row ? toRow(row, ISO) : undefined;
  }

  private open(): SqliteDatabase {
    if (!this.db.isOpen) throw new LedgerError('Closed', `the SQLite ledger ${this.file} is closed`);
    return this.db;
  }
}

/** How this driver returns times, as the ISO strings LedgerRow holds. */
const ISO = (t: string) => t;
