/**
 * The ledger's tables as both back ends read them: the columns, the raw rows (times as the driver returns
 * them: ISO text from SQLite, Date from PostgreSQL), and their mapping onto LedgerRow / LedgerAuditEntry.
 */
import type { LedgerAlarm, LedgerAlarmKind, LedgerAuditEntry, LedgerRow, LedgerStatus } from './action-ledger';
import { LedgerError } from './action-ledger';

export const ROW_COLUMNS =
  'action_key, tenant, operation, tool_version, request_hash, status, provider_ref, outcome, owner, claimed_at, settled_at, updated_at, seq, holder, epoch, lease_until';

export const ALARM_COLUMNS = 'id, action_key, at, kind, detail';

export interface ActionRowRecord<Time> {
  action_key: string;
  tenant: string;
  operation: string;
  tool_version: number;
  request_hash: string;
  status: string;
  provider_ref: string | null;
  outcome: string | null;
  owner: string;
  claimed_at: Time;
  settled_at: Time | null;
  updated_at: Time;
  seq: number;
  holder: string | null;
  epoch: number;
  lease_until: Time | null;
}

export interface AlarmRowRecord<Time> {
  id: number | string;
  action_key: string;
  at: Time;
  kind: string;
  detail: string;
}

export function toAlarm<Time>(r: AlarmRowRecord<Time>, iso: (t: Time) => string): LedgerAlarm {
  return { id: Number(r.id), key: r.action_key, at: iso(r.at), kind: r.kind as LedgerAlarmKind, detail: r.detail };
}

export interface AuditRowRecord<Time> {
  action_key: string;
  seq: number;
  status: string;
  at: Time;
  reason: string;
  actor: string | null;
}

export function toRow<Time>(r: ActionRowRecord<Time>, iso: (t: Time) => string): LedgerRow {
  return {
    key: r.action_key,
    tenant: r.tenant,
    operation: r.operation,
    toolVersion: r.tool_version,
    requestHash: r.request_hash,
    status: r.status as LedgerStatus,
    ...(r.provider_ref !== null ? { providerRef: r.provider_ref } : {}),
    ...(r.outcome !== null ? { outcome: r.outcome } : {}),
    owner: r.owner,
    claimedAt: iso(r.claimed_at),
    ...(r.settled_at !== null ? { settledAt: iso(r.settled_at) } : {}),
    updatedAt: iso(r.updated_at),
    seq: r.seq,
    ...(r.holder !== null ? { holder: r.holder } : {}),
    epoch: Number(r.epoch),
    ...(r.lease_until !== null ? { leaseUntil: iso(r.lease_until) } : {}),
  };
}

export function toAuditEntry<Time>(r: AuditRowRecord<Time>, iso: (t: Time) => string): LedgerAuditEntry {
  return {
    key: r.action_key,
    seq: r.seq,
    status: r.status as LedgerStatus,
    at: iso(r.at),
    reason: r.reason,
    ...(r.actor !== null ? { by: r.actor } : {}),
  };
}

export function unknownAction(key: string): LedgerError {
  return new LedgerError('UnknownAction', `the ledger has no row for ${key}: record its claim before its statuses`);
}
