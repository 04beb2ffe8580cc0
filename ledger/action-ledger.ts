import type { ActionStatus } from '../policies/action-status';
import { ACTION_STATUSES } from '../policies/action-status';

/**
 * The durable action ledger: one row per action key and an append-only audit log of every status change, kept
 * in a database of the user's (SQLite or PostgreSQL) so that an action key keeps protecting after its Temporal
 * workflow has passed the namespace's retention. This file holds the contract only; the back ends are
 * `sqlite-ledger.ts` and `postgres-ledger.ts`, opened from configuration by `ledger-config.ts`.
 *
 * Every write is keyed: the row by the action key, each audit entry by (key, seq). A retried activity or a replayed
 * workflow therefore writes nothing twice, and the ledger never needs to know which attempt it is hearing from.
 */

export type LedgerStatus = ActionStatus;

/** Unsettled actions of one tenant, operation and status. */
export interface OpenActionGroup {
  tenant: string;
  operation: string;
  status: LedgerStatus;
  count: number;
  /** When the oldest of them was claimed (ISO 8601). */
  oldestClaimedAt: string;
}

/** What `openActionStats` reads: the open actions by group, and the alarms recorded, by kind. */
export interface OpenActionStats {
  groups: OpenActionGroup[];
  alarms: Record<LedgerAlarmKind, number>;
}

/** The open-action query both backends run: rows not yet settled, grouped; `claimed_at` compares as time in both. */
export const OPEN_ACTION_GROUPS_SQL = (actionsTable: string) =>
  `SELECT tenant, operation, status, count(*) AS n, min(claimed_at) AS oldest FROM ${actionsTable} ` +
  'WHERE settled_at IS NULL GROUP BY tenant, operation, status';

/** The alarms-by-kind query both backends run. */
export const ALARM_KINDS_SQL = (alarmsTable: string) => `SELECT kind, count(*) AS n FROM ${alarmsTable} GROUP BY kind`;

/** The stats from the two queries' rows (`oldest` as the backend returns it, made ISO by `iso`). */
export function openActionStatsOf<T>(
  groups: Array<{ tenant: string; operation: string; status: string; n: number | string; oldest: T }>,
  alarms: Array<{ kind: string; n: number | string }>,
  iso: (t: T) => string,
): OpenActionStats {
  const byKind = Object.fromEntries(LEDGER_ALARM_KINDS.map((k) => [k, 0])) as Record<LedgerAlarmKind, number>;
  for (const a of alarms) if (a.kind in byKind) byKind[a.kind as LedgerAlarmKind] = Number(a.n);
  return {
    groups: groups.map((g) => ({
      tenant: g.tenant,
      operation: g.operation,
      status: g.status as LedgerStatus,
      count: Number(g.n),
      oldestClaimedAt: iso(g.oldest),
    })),
    alarms: byKind,
  };
}

/** One action as the ledger holds it. Times are ISO 8601 strings in UTC (`2026-08-28T09:00:00.000Z`). */
export interface LedgerRow {
  key: string;
  tenant: string;
  operation: string;
  toolVersion: number;
  requestHash: string;
  status: LedgerStatus;
  providerRef?: string;
  /** one line for people: e.g. `confirmed: ch_1`, `failed: BusinessRejected: card declined` */
  outcome?: string;
  owner: string;
  claimedAt: string;
  /** When the action reached a final status (a status recorded with `settled: true`). */
  settledAt?: string;
  /** The time of the last change applied: the claim's, then the applied status's `at`. */
  updatedAt: string;
  /**
   * The sequence number of the last status applied (the action's audit index). A new row holds `planned` at 0,
   * the index of the action's first audit entry, until a status is recorded.
   */
  seq: number;
  /**
   * Who may write the row's statuses now: the action workflow run (`action:<runId>`) that claimed it or took it
   * over. Absent on rows written before holders existed (schema 1), which anyone recording statuses may move.
   */
  holder?: string;
  /** The fencing epoch: 1 when first claimed, one more at every takeover. A holder acts only at its own epoch. */
  epoch: number;
  /** Until when the holder's claim stands without it renewing it; absent when it does not expire. */
  leaseUntil?: string;
}

/** A claim of an action's row by the one that will act on it, before it does anything. */
export interface RowClaimRecord extends ClaimRecord {
  /** Who claims: see LedgerRow.holder. */
  holder: string;
  leaseUntil?: string;
  /**
   * The row's first audit entry (seq 0, `planned`, at `claimedAt`), written in the claim's own transaction when the
   * claim creates the row, so a new row is never without it; a claim that finds the row writes nothing. A run's act
   * puts its intent on record this way in one durable write instead of two.
   */
  planned?: { reason: string; outcome?: string };
  /**
   * With `planned` only: the row's second entry (seq 1, `dispatching`, at `claimedAt`), in the same transaction, and
   * the new row stands at it. A run's act that sends at once, with a key the provider dedupes by, puts its intent and
   * its dispatch on record in one durable write instead of two: should it die before the send, the next execution
   * reads the row as possibly sent, and the key makes its resend safe. A claim that finds the row writes nothing.
   */
  dispatching?: { reason: string; outcome?: string };
}

/**
 * What claiming a row found: `new`, the row was created for this holder; `held`, this holder holds it already (a
 * retried claim); `other`, someone else claimed the key before: compare `row.requestHash`, and act on `row.status`.
 */
export interface RowClaim {
  kind: 'new' | 'held' | 'other';
  row: LedgerRow;
}

/**
 * Why a write did not apply while the row says something else happened: a write from whoever does not hold the row
 * (`not-holder`), or an audit entry whose sequence number is taken by a different one (`audit-conflict`); or a row
 * a run's act left unsettled when the run ended, whose intent nothing holds any more (`abandoned`, raised by the
 * sweeper: a person settles it). Recorded, shown by `ops alarms` and `ops show`, never silently dropped.
 */
export type LedgerAlarmKind = 'not-holder' | 'audit-conflict' | 'abandoned';
export const LEDGER_ALARM_KINDS: readonly LedgerAlarmKind[] = ['not-holder', 'audit-conflict', 'abandoned'];

/**
 * A write the ledger refused because it disagreed with the row (a writer that no longer holds the key, or an audit
 * entry that contradicts one recorded): kept for operators (`retrysafe ops alarms`).
 */
export interface LedgerAlarm {
  id: number;
  key: string;
  at: string;
  kind: LedgerAlarmKind;
  detail: string;
}

/** What a status write did: applied (or a repeat of one applied), or refused with the alarm it raised. */
export interface StatusWrite {
  applied: boolean;
  /** The same entry was already there (a retried write): nothing new was recorded. */
  repeat?: boolean;
  alarm?: LedgerAlarm;
}

/** The claim that creates an action's row (status `planned`, seq 0). */
export interface ClaimRecord {
  key: string;
  tenant: string;
  operation: string;
  toolVersion: number;
  requestHash: string;
  owner: string;
  claimedAt: string;
}

/** One entry of an action's audit log: a status change as recorded, numbered by its index in the action's trail. */
export interface LedgerAuditEntry {
  key: string;
  seq: number;
  status: LedgerStatus;
  at: string;
  reason: string;
  by?: string;
}

/** One status change of an action as the engine writes it: its audit entry, and what only the row keeps. */
export interface StatusRecord extends LedgerAuditEntry {
  providerRef?: string;
  outcome?: string;
  /** set for final statuses */
  settled?: boolean;
}

/** Which rows `history` returns: all conditions hold at once; `since`/`until` bound `claimedAt` (until exclusive). */
export interface HistoryFilter {
  tenant?: string;
  operation?: string;
  since?: Date;
  until?: Date;
  status?: LedgerStatus[];
  /**
   * At most this many rows, newest claim first; default `DEFAULT_HISTORY_LIMIT` (100), at most `MAX_HISTORY_LIMIT`
   * (10 000).
   */
  limit?: number;
}

/** How many rows `history` returns when the filter names no limit. */
export const DEFAULT_HISTORY_LIMIT = 100;
/** The largest `limit` a history filter may ask for. */
export const MAX_HISTORY_LIMIT = 10_000;

/**
 * The durable record of every action key, beside Temporal's history: the worker claims a key's row before its first
 * send, and a key the ledger knows as settled or unresolved is never sent again, even after its workflow is gone.
 * SQLite (one machine) or PostgreSQL (shared).
 *
 * A team opens it (`openLedger`), migrates it, reads it (`get`, `history`, `audit`, `alarms`, `openActionStats`),
 * hands it to the worker and closes it. The row writes (claims, takeovers, statuses, alarms) are the engine's:
 * tagged internal, they are left out of the published declarations (`stripInternal` in tsconfig.build.json; the
 * tag in this comment would strip the whole interface), so no typed code outside the engine writes a row behind
 * its holder's back. The object `openLedger` returns has them, and the engine reaches them through the very
 * `ActionLedger` a team passes in.
 */
export interface ActionLedger {
  readonly kind: 'sqlite' | 'postgres';
  /** Applies the schema migrations this database lacks; throws `LedgerSchemaError` when it is newer. */
  migrate(): Promise<{ from: number; to: number }>;
  /**
   * Inserts the row if the key is new; returns the stored row either way (compare its requestHash).
   * @internal the engine's write
   */
  recordClaim(claim: ClaimRecord): Promise<LedgerRow>;
  /**
   * Claims the action's row for `holder` before it acts: inserts the row (epoch 1) if the key is new, otherwise
   * returns what stands there. Never moves a row held by another; see takeOver.
   * @internal the engine's write
   */
  claimRow(claim: RowClaimRecord): Promise<RowClaim>;
  /**
   * Moves the row to `holder` if its epoch is still `epoch` (compare-and-swap), raising the epoch; the row as it
   * is now, or undefined when another took it first (read it again and decide again).
   * @internal the engine's write
   */
  takeOver(key: string, epoch: number, holder: string, leaseUntil?: string): Promise<LedgerRow | undefined>;
  /**
   * Appends the audit entry (unique per key+seq) and moves the row's status if seq is newer; idempotent. A status
   * for a key without a row is an error (`LedgerError` `UnknownAction`). With `holder`, a row held by
   * another refuses the write; an entry that takes a sequence number already taken by a different entry is
   * refused too. Both raise an alarm.
   * @internal the engine's write
   */
  recordStatus(update: StatusRecord & { holder?: string }): Promise<StatusWrite>;
  /**
   * Records an alarm about `key` (the ledger raises its own; callers add what they find elsewhere).
   * @internal the engine's write
   */
  raiseAlarm(key: string, kind: LedgerAlarmKind, detail: string, at?: string): Promise<LedgerAlarm>;
  /** Alarms, newest first: all of them, or one key's. */
  alarms(filter?: { key?: string; limit?: number }): Promise<LedgerAlarm[]>;
  /** The key's row, or undefined when the ledger has never seen the key. */
  get(key: string): Promise<LedgerRow | undefined>;
  /** The action's audit entries in sequence order. */
  audit(key: string): Promise<LedgerAuditEntry[]>;
  /** Rows matching `filter`, newest claim first. */
  history(filter: HistoryFilter): Promise<LedgerRow[]>;
  /** Unsettled actions grouped by tenant, operation and status, and the alarms by kind: what the metrics show. */
  openActionStats(): Promise<OpenActionStats>;
  /** Releases the database (file handle or pool); later calls fail. Closing twice is harmless. */
  close(): Promise<void>;
}

/**
 * The database's ledger schema is not the one this code knows: newer (written by a later release: run that one, or
 * restore a matching backup; nothing is migrated or written), or older while migrations were not allowed to run.
 */
export class LedgerSchemaError extends Error {
  override readonly name = 'LedgerSchemaError';

  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
    where = 'the ledger database',
  ) {
    super(
      databaseVersion > codeVersion
        ? `${where} has ledger schema version ${databaseVersion}, newer than the ${codeVersion} this code knows; ` +
            'refusing to use or migrate it (run the retrysafe release that wrote it)'
        : `${where} has ledger schema version ${databaseVersion}, older than the ${codeVersion} this code needs, ` +
            'and migrations were not to run here (a worker migrates it when it starts)',
    );
  }
}

/** Why a ledger call failed: no such key, a record that fails validation, a bad configuration, or a closed ledger. */
export type LedgerErrorCode = 'UnknownAction' | 'InvalidRecord' | 'InvalidConfig' | 'Closed';

/** A ledger call that cannot succeed as asked: `code` says why. */
export class LedgerError extends Error {
  override readonly name: string = 'LedgerError';

  constructor(
    readonly code: LedgerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * RETRYSAFE_LEDGER (or a LedgerConfig) does not say where a ledger is; the message names the variable, never a
 * password.
 */
export class LedgerConfigError extends LedgerError {
  override readonly name: string = 'LedgerConfigError';

  constructor(message: string) {
    super('InvalidConfig', message);
  }
}

// ── checks shared by the back ends (pure) ──

/** `value` as a canonical ISO string (UTC, milliseconds), or a LedgerError naming `field`. */
export function isoTime(value: string, field: string): string {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new LedgerError('InvalidRecord', `${field} is not a time: ${String(value)}`);
  return new Date(ms).toISOString();
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new LedgerError('InvalidRecord', `${field} must be a non-empty string`);
  }
  return value;
}

function optionalText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new LedgerError('InvalidRecord', `${field} must be a string when set`);
  return value;
}

function count(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new LedgerError('InvalidRecord', `${field} must be a non-negative integer, not ${String(value)}`);
  }
  return value;
}

/** The claim with its fields checked and its time canonical; throws LedgerError `InvalidRecord`. */
export function checkedClaim(claim: ClaimRecord): ClaimRecord {
  return {
    key: text(claim.key, 'key'),
    tenant: text(claim.tenant, 'tenant'),
    operation: text(claim.operation, 'operation'),
    toolVersion: count(claim.toolVersion, 'toolVersion'),
    requestHash: text(claim.requestHash, 'requestHash'),
    owner: text(claim.owner, 'owner'),
    claimedAt: isoTime(claim.claimedAt, 'claimedAt'),
  };
}

/** The status record with its fields checked and its time canonical; throws LedgerError `InvalidRecord`. */
export function checkedStatus(update: StatusRecord): StatusRecord {
  if (!(ACTION_STATUSES as readonly string[]).includes(update.status)) {
    throw new LedgerError('InvalidRecord', `status ${String(update.status)} is not an action status`);
  }
  const by = optionalText(update.by, 'by');
  const providerRef = optionalText(update.providerRef, 'providerRef');
  const outcome = optionalText(update.outcome, 'outcome');
  if (typeof update.reason !== 'string') throw new LedgerError('InvalidRecord', 'reason must be a string');
  return {
    key: text(update.key, 'key'),
    seq: count(update.seq, 'seq'),
    status: update.status,
    at: isoTime(update.at, 'at'),
    reason: update.reason,
    ...(by !== undefined ? { by } : {}),
    ...(providerRef !== undefined ? { providerRef } : {}),
    ...(outcome !== undefined ? { outcome } : {}),
    ...(update.settled ? { settled: true } : {}),
  };
}

/**
 * A row claim's values as both drivers' INSERT binds them first: key, tenant, operation, tool version, request hash,
 * owner, claimed at (also the first updated at), holder, lease. Where the new row stands follows (`newRowStanding`).
 */
export function rowClaimValues(c: RowClaimRecord): Array<string | number | null> {
  return [
    c.key,
    c.tenant,
    c.operation,
    c.toolVersion,
    c.requestHash,
    c.owner,
    c.claimedAt,
    c.holder,
    c.leaseUntil ?? null,
  ];
}

/** The row claim's fields checked (the claim's, the holder's, and the entries it writes with a new row). */
export function checkedRowClaim(claim: RowClaimRecord): RowClaimRecord {
  return {
    ...checkedClaim(claim),
    holder: text(claim.holder, 'holder'),
    ...(claim.leaseUntil !== undefined ? { leaseUntil: isoTime(claim.leaseUntil, 'leaseUntil') } : {}),
    ...(claim.planned !== undefined ? { planned: checkedEntry(claim.planned, 'planned') } : {}),
    ...(claim.dispatching !== undefined ? { dispatching: checkedDispatching(claim) } : {}),
  };
}

type ClaimEntry = NonNullable<RowClaimRecord['planned']>;

function checkedEntry(entry: ClaimEntry, field: 'planned' | 'dispatching'): ClaimEntry {
  if (typeof entry.reason !== 'string') throw new LedgerError('InvalidRecord', `${field}.reason must be a string`);
  const outcome = optionalText(entry.outcome, `${field}.outcome`);
  return { reason: entry.reason, ...(outcome !== undefined ? { outcome } : {}) };
}

function checkedDispatching(claim: RowClaimRecord): ClaimEntry {
  if (claim.planned === undefined) {
    throw new LedgerError('InvalidRecord', 'dispatching needs planned: a row written by its claim starts at planned');
  }
  return checkedEntry(claim.dispatching!, 'dispatching');
}

/**
 * Where a claim's new row stands: `planned` at seq 0, or `dispatching` at seq 1 (with that entry's outcome) when the
 * claim writes that entry too.
 */
export function newRowStanding(c: RowClaimRecord): { status: LedgerStatus; seq: number; outcome: string | null } {
  return c.planned && c.dispatching
    ? { status: 'dispatching', seq: 1, outcome: c.dispatching.outcome ?? null }
    : { status: 'planned', seq: 0, outcome: null };
}

/**
 * The audit entries a claim that creates its row writes with it, in order: seq 0 `planned`, then seq 1 `dispatching`
 * when it has one; each as key, seq, status, at (the claim's), reason, actor, provider ref, outcome.
 */
export function claimEntryValues(c: RowClaimRecord): Array<Array<string | number | null>> {
  if (!c.planned) return [];
  const entry = (seq: number, status: LedgerStatus, e: ClaimEntry) => [
    c.key,
    seq,
    status,
    c.claimedAt,
    e.reason,
    null,
    null,
    e.outcome ?? null,
  ];
  return [entry(0, 'planned', c.planned), ...(c.dispatching ? [entry(1, 'dispatching', c.dispatching)] : [])];
}

/** The detail of an alarm about a write that a row held by another refused. */
export function notHolderDetail(u: StatusRecord & { holder?: string }, holder: string): string {
  return `a write of ${u.status} (seq ${u.seq}) by ${u.holder} was refused: the row is held by ${holder}`;
}

/** The detail of an alarm about an audit entry whose sequence number holds another entry. */
export function auditConflictDetail(u: StatusRecord, existing: { status: string; reason: string }): string {
  return (
    `seq ${u.seq} holds ${existing.status} (${existing.reason.slice(0, 120)}); ` +
    `a write of ${u.status} (${u.reason.slice(0, 120)}) for the same seq was refused`
  );
}

/**
 * Whether a new audit entry moves the row. One at or past the row's seq does (the claim's row sits at 0 with no entry
 * yet); an older one arriving late only completes the audit log. And `planned` never moves a row that has left it:
 * past `planned` a request may have been sent, and a row read as `planned` lets the next holder send fresh (a
 * takeover's first entry, written after the act it took the row from wrote `dispatching`).
 */
export function entryMovesRow(u: Pick<StatusRecord, 'seq' | 'status'>, row: { seq: number; status: string }): boolean {
  if (u.seq < row.seq) return false;
  return u.status !== 'planned' || row.status === 'planned';
}

/** Whether an audit entry repeats the one stored at its sequence number (a retried write) or disagrees with it. */
export function sameAuditEntry(u: StatusRecord, existing: { status: string; reason: string }): boolean {
  return existing.status === u.status && existing.reason === u.reason;
}

/** The number of alarms `alarms` returns: 100 unless asked, at most MAX_HISTORY_LIMIT. */
export function alarmLimit(limit: number | undefined): number {
  return historyLimit({ limit });
}

/** The number of rows `history` returns for `filter`. */
export function historyLimit(filter: HistoryFilter): number {
  if (filter.limit === undefined) return DEFAULT_HISTORY_LIMIT;
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 1) {
    throw new LedgerError('InvalidRecord', `limit must be a positive integer, not ${String(filter.limit)}`);
  }
  return Math.min(filter.limit, MAX_HISTORY_LIMIT);
}

/** `date` as an ISO string for a history bound; throws on an invalid Date. */
export function boundTime(date: Date, field: string): string {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new LedgerError('InvalidRecord', `${field} must be a valid Date`);
  }
  return date.toISOString();
}

/**
 * The WHERE conditions of `history` over the ledger's columns, with `placeholder(n)` naming the n-th parameter
 * (1-based) in the dialect's syntax; `none` when the filter cannot match anything (an empty status list).
 */
export function historyQuery(
  filter: HistoryFilter,
  placeholder: (n: number, kind: 'text' | 'time') => string,
): { where: string; params: string[]; limit: number; none: boolean } {
  const limit = historyLimit(filter);
  const conditions: string[] = [];
  const params: string[] = [];
  const add = (sql: (p: string) => string, value: string, kind: 'text' | 'time' = 'text') => {
    params.push(value);
    conditions.push(sql(placeholder(params.length, kind)));
  };
  if (filter.tenant !== undefined) add((p) => `tenant = ${p}`, filter.tenant);
  if (filter.operation !== undefined) add((p) => `operation = ${p}`, filter.operation);
  if (filter.since !== undefined) add((p) => `claimed_at >= ${p}`, boundTime(filter.since, 'since'), 'time');
  if (filter.until !== undefined) add((p) => `claimed_at < ${p}`, boundTime(filter.until, 'until'), 'time');
  if (filter.status !== undefined) {
    for (const s of filter.status) {
      if (!(ACTION_STATUSES as readonly string[]).includes(s)) {
        throw new LedgerError('InvalidRecord', `status ${String(s)} is not an action status`);
      }
    }
    const first = params.length + 1;
    params.push(...filter.status);
    conditions.push(`status IN (${filter.status.map((_, i) => placeholder(first + i, 'text')).join(', ')})`);
  }
  return {
    where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '',
    params,
    limit,
    none: filter.status !== undefined && filter.status.length === 0,
  };
}
