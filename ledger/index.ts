// The durable action ledger: a row per action key and an audit log of its status changes, in SQLite or PostgreSQL.
export type {
  ActionLedger,
  ClaimRecord,
  HistoryFilter,
  LedgerAlarm,
  LedgerAlarmKind,
  LedgerAuditEntry,
  LedgerErrorCode,
  LedgerRow,
  LedgerStatus,
  OpenActionGroup,
  OpenActionStats,
  RowClaim,
  RowClaimRecord,
  StatusRecord,
  StatusWrite,
} from './action-ledger';
export {
  DEFAULT_HISTORY_LIMIT,
  LEDGER_ALARM_KINDS,
  LedgerConfigError,
  LedgerError,
  LedgerSchemaError,
  MAX_HISTORY_LIMIT,
} from './action-ledger';
export type { LedgerMigration, MigrationResult } from './migrations';
export { LEDGER_MIGRATIONS, LEDGER_SCHEMA_VERSION } from './migrations';
export type { LedgerConfig, OpenLedgerOptions } from './ledger-config';
export {
  LEDGER_ENV_VAR,
  ledgerChoiceFromEnv,
  ledgerConfigFromEnv,
  openLedger,
  redact,
} from './ledger-config';
export type { SqliteLedgerOptions } from './sqlite-ledger';
export { SQLITE_BUSY_TIMEOUT_MS, SqliteLedger } from './sqlite-ledger';
export type { PostgresLedgerOptions } from './postgres-ledger';
export { POSTGRES_POOL_SIZE, PostgresLedger } from './postgres-ledger';
