import { createRequire } from 'node:module';
import type * as Pg from 'pg';
import type { Pool, PoolClient } from 'pg';

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
import {
  ACTIONS_TABLE,
  ALARMS_TABLE,
  AUDIT_TABLE,
  LEDGER_MIGRATIONS,
  postgresSchemaVersion,
  migratePostgres,
} from './migrations';

/**
 * The ledger in a PostgreSQL database (node-postgres), over a small pool: a worker's writes are short and few, one
 * per status change. Times are `timestamptz` and come back as ISO strings. Several workers may share the database;
 * the row of one key is locked while a status is applied to it, so concurrent updates apply in sequence order.
 */

export const POSTGRES_POOL_SIZE = 4;

/** How to reach the database and size the pool. */
export interface PostgresLedgerOptions {
  /** `postgres://user:password@host:port/database` (see ledger-config.ts). */
  connectionString: string;
  poolSize?: number;
  connectionTimeoutMs?: number;
  /** The schema to migrate to; tests pass a longer list to play a newer release. */
  migrations?: readonly LedgerMigration[];
  /** Called with errors of idle pooled connections (the server restarted, the network dropped); default ignores. */
  onPoolError?: (err: Error) => void;
}

/** The ledger on PostgreSQL, shared by every worker and client of a deployment. Needs the optional `pg` package. */
export class PostgresLedger implements ActionLedger {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private readonly migrations: readonly LedgerMigration[];
  private closed = false;

  constructor(options: PostgresLedgerOptions) {
    this.migrations = options.migrations ?? LEDGER_MIGRATIONS;
    const { Pool } = loadPg();
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? POSTGRES_POOL_SIZE,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'retrysafe-ledger',
      // A write that returned is on the server's disk, whatever the server's default: the record-first path reads
      // a row still `planned` as "nothing was sent", so a `dispatching` lost in a crash could let a retry send again.
      options: '-c synchronous_commit=on',
    });
    // Without a listener an idle connection's error would crash the process; the next query reconnects.
    this.pool.on('error', options.onPoolError ?? (() => undefined));
  }

  async migrate(): Promise<MigrationResult> {
    return migratePostgres(this.open(), this.migrations);
  }

  /** The schema version the database holds (0: no ledger yet), without changing it. */
  async schemaVersion(): Promise<number> {
    return postgresSchemaVersion(this.open());
  }

  /** @internal the engine's write: see ActionLedger. */
  async recordClaim(claim: ClaimRecord): Promise<LedgerRow> {
    const c = checkedClaim(claim);
    const pool = this.open();
    // A concurrent insert of the same key waits for the first to commit, then does nothing; the read below sees it.
    await pool.query(
      `INSERT INTO ${ACTIONS_TABLE} (action_key, tenant, operation, tool_version, request_hash, status, owner,
         claimed_at, updated_at, seq)
       VALUES ($1, $2, $3, $4, $5, 'planned', $6, $7, $7, 0)
       ON CONFLICT (action_key) DO NOTHING`,
      [c.key, c.tenant, c.operation, c.toolVersion, c.requestHash, c.owner, c.claimedAt],
    );
    const row = await this.select(c.key);
    if (!row) throw new Error(`the ledger lost the row of ${c.key} it just wrote`);
    return row;
  }

  /** @internal the engine's write: see ActionLedger. */
  async claimRow(claim: RowClaimRecord): Promise<RowClaim> {
    const c = checkedRowClaim(claim);
    const standing = newRowStanding(c);
    const insertRow = (db: Pick<PoolClient, 'query'>) =>
      db.query(
        `INSERT INTO ${ACTIONS_TABLE} (action_key, tenant, operation, tool_version, request_hash, owner,
           claimed_at, holder, lease_until, updated_at, status, seq, outcome, epoch)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $7, $10, $11, $12, 1)
         ON CONFLICT (action_key) DO NOTHING`,
        [...rowClaimValues(c), standing.status, standing.seq, standing.outcome],
      );
    const entries = claimEntryValues(c);
    // A concurrent insert of the same key waits for the first to commit, then inserts nothing; the read sees it.
    const inserted = entries.length
      ? await this.transaction(async (client) => {
          const r = await insertRow(client);
          if (r.rowCount === 1) {
            for (const entry of entries) {
              await client.query(
                `INSERT INTO ${AUDIT_TABLE} (action_key, seq, status, at, reason, actor, provider_ref, outcome)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
                entry,
              );
            }
          }
          return r;
        })
      : await insertRow(this.open());
    const row = await this.select(c.key);
    if (!row) throw new Error(`the ledger lost the row of ${c.key} it just wrote`);
    if (inserted.rowCount === 1) return { kind: 'new', row };
    return { kind: row.holder === c.holder ? 'held' : 'other', row };
  }

  /** @internal the engine's write: see ActionLedger. */
  async takeOver(key: string, epoch: number, holder: string, leaseUntil?: string): Promise<LedgerRow | undefined> {
    const lease = leaseUntil === undefined ? null : isoTime(leaseUntil, 'leaseUntil');
    const { rows } = await this.open().query<ActionRowRecord<Date>>(
      `UPDATE ${ACTIONS_TABLE} SET holder = $2, epoch = epoch + 1, lease_until = $3
        WHERE action_key = $1 AND epoch = $4
        RETURNING ${ROW_COLUMNS}`,
      [key, holder, lease, epoch],
    );
    return rows[0] ? toRow(rows[0], ISO) : undefined;
  }

  /** @internal the engine's write: see ActionLedger. */
  async recordStatus(update: StatusRecord & { holder?: string }): Promise<StatusWrite> {
    const u = checkedStatus(update);
    return this.transaction(async (client): Promise<StatusWrite> => {
      const current = await client.query<{ seq: number; status: string; holder: string | null }>(
        `SELECT seq, status, holder FROM ${ACTIONS_TABLE} WHERE action_key = $1 FOR UPDATE`,
        [u.key],
      );
      if (current.rowCount === 0) throw unknownAction(u.key);
      const row = current.rows[0];
      if (update.holder !== undefined && row.holder !== null && row.holder !== update.holder) {
        return {
          applied: false,
          alarm: await this.alarm(client, u.key, 'not-holder', notHolderDetail(update, row.holder), u.at),
        };
      }
      const inserted = await client.query(
        `INSERT INTO ${AUDIT_TABLE} (action_key, seq, status, at, reason, actor, provider_ref, outcome)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (action_key, seq) DO NOTHING`,
        [u.key, u.seq, u.status, u.at, u.reason, u.by ?? null, u.providerRef ?? null, u.outcome ?? null],
      );
      if (inserted.rowCount !== 1) {
        const existing = await client.query<{ status: string; reason: string }>(
          `SELECT status, reason FROM ${AUDIT_TABLE} WHERE action_key = $1 AND seq = $2`,
          [u.key, u.seq],
        );
        if (sameAuditEntry(u, existing.rows[0])) return { applied: true, repeat: true };
        return {
          applied: false,
          alarm: await this.alarm(client, u.key, 'audit-conflict', auditConflictDetail(u, existing.rows[0]), u.at),
        };
      }
      if (!entryMovesRow(u, row)) return { applied: true };
      await client.query(
        `UPDATE ${ACTIONS_TABLE}
            SET status = $2, seq = $3, provider_ref = COALESCE($4, provider_ref), outcome = COALESCE($5, outcome),
                settled_at = $6, updated_at = $7
          WHERE action_key = $1`,
        [u.key, u.status, u.seq, u.providerRef ?? null, u.outcome ?? null, u.settled ? u.at : null, u.at],
      );
      return { applied: true };
    });
  }

  /** @internal the engine's write: see ActionLedger. */
  async raiseAlarm(key: string, kind: LedgerAlarmKind, detail: string, at?: string): Promise<LedgerAlarm> {
    const when = at === undefined ? new Date().toISOString() : isoTime(at, 'at');
    return this.checkout((client) => this.alarm(client, key, kind, detail, when));
  }

  async openActionStats(): Promise<OpenActionStats> {
    const pool = this.open();
    const groups = await pool.query<{ tenant: string; operation: string; status: string; n: string; oldest: Date }>(
      OPEN_ACTION_GROUPS_SQL(ACTIONS_TABLE),
    );
    const alarms = await pool.query<{ kind: string; n: string }>(ALARM_KINDS_SQL(ALARMS_TABLE));
    return openActionStatsOf(groups.rows, alarms.rows, ISO);
  }

  async alarms(filter: { key?: string; limit?: number } = {}): Promise<LedgerAlarm[]> {
    const limit = alarmLimit(filter.limit);
    const { rows } =
      filter.key === undefined
        ? await this.open().query<AlarmRowRecord<Date>>(
            `SELECT ${ALARM_COLUMNS} FROM ${ALARMS_TABLE} ORDER BY id DESC LIMIT $1`,
            [limit],
          )
        : await this.open().query<AlarmRowRecord<Date>>(
            `SELECT ${ALARM_COLUMNS} FROM ${ALARMS_TABLE} WHERE action_key = $1 ORDER BY id DESC LIMIT $2`,
            [filter.key, limit],
          );
    return rows.map((r) => toAlarm(r, ISO));
  }

  private async alarm(
    client: PoolClient,
    key: string,
    kind: LedgerAlarmKind,
    detail: string,
    at: string,
  ): Promise<LedgerAlarm> {
    const { rows } = await client.query<AlarmRowRecord<Date>>(
      `INSERT INTO ${ALARMS_TABLE} (action_key, at, kind, detail) VALUES ($1, $2, $3, $4) RETURNING ${ALARM_COLUMNS}`,
      [key, at, kind, detail],
    );
    return toAlarm(rows[0], ISO);
  }

  /** The key's row, or undefined when the ledger has never seen the key. */
  async get(key: string): Promise<LedgerRow | undefined> {
    return this.select(key);
  }

  async audit(key: string): Promise<LedgerAuditEntry[]> {
    const { rows } = await this.open().query<AuditRowRecord<Date>>(
      `SELECT action_key, seq, status, at, reason, actor FROM ${AUDIT_TABLE} WHERE action_key = $1 ORDER BY seq`,
      [key],
    );
    return rows.map((r) => toAuditEntry(r, ISO));
  }

  async history(filter: HistoryFilter): Promise<LedgerRow[]> {
    const q = historyQuery(filter, (n, kind) => (kind === 'time' ? `$${n}::timestamptz` : `$${n}`));
    if (q.none) return [];
    const { rows } = await this.open().query<ActionRowRecord<Date>>(
      `SELECT ${ROW_COLUMNS} FROM ${ACTIONS_TABLE} ${q.where}
        ORDER BY claimed_at DESC, action_key DESC
        LIMIT $${q.params.length + 1}`,
      [...q.params, q.limit],
    );
    return rows.map((r) => toRow(r, ISO));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  private async select(key: string): Promise<LedgerRow | undefined> {
    const { rows } = await this.open().query<ActionRowRecord<Date>>(
      `SELECT ${ROW_COLUMNS} FROM ${ACTIONS_TABLE} WHERE action_key = $1`,
      [key],
    );
    return rows[0] ? toRow(rows[0], ISO) : undefined;
  }

  private transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.checkout(async (client) => {
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * One pooled connection for several statements. A connection that breaks while it is checked out (the server was
   * killed, the worker was stopped past a restart) emits `error` on its client, and an `error` without a listener
   * ends the process: a worker would die of a database restart. It is handed back broken instead, so the pool drops
   * it, and the statement in flight fails as usual.
   */
  private async checkout<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.open().connect();
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  private open(): Pool {
    if (this.closed) throw new LedgerError('Closed', 'the PostgreSQL ledger is closed');
    return this.pool;
  }
}

/** `pg` is an optional peer: loaded when a PostgreSQL ledger is opened, with a message that says what to install. */
function loadPg(): typeof Pg {
  try {
    return createRequire(__filename)('pg') as typeof Pg;
  } catch (err) {
    throw new LedgerConfigError(
      `a PostgreSQL ledger needs the pg package (npm install pg): ${(err as Error).message.split('\n')[0]}`,
    );
  }
}

/** How this driver returns times, as the ISO strings LedgerRow holds. */
const ISO = (t: Date) => t.toISOString();
