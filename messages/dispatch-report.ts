/**
 * What a report of a send means, in one place: the action workflow applies an owner's (workflows/action.ts), the
 * owner run continues from the same status without waiting to be told (workflows/action-run.ts), and a run's act
 * settles the ledger row with it (activities/act-on-record.ts). All derive the status change from here, so the
 * views cannot drift apart.
 */
import type { ActionSnapshot, DispatchReport } from './action';
import { isErrorCode } from '../policies/errors';
import { appendRequests, requestLogIn, type ProviderRequest } from '../policies/provider-requests';
import type { Json } from '../policies/tool';

export interface ReportedMove {
  to: 'confirmed' | 'unknown' | 'failed';
  reason: string;
  providerRef?: string;
  record?: Json | null;
  error?: { code: string; message: string };
}

/** The status change a report makes: the executor's verdict, its refusal, or unknown when there was none. */
export function reportedMove(report: DispatchReport): ReportedMove {
  switch (report.kind) {
    case 'outcome': {
      const o = report.outcome;
      return o.status === 'confirmed'
        ? {
            to: 'confirmed',
            reason: `provider ${o.via}: ${o.providerRef}`,
            providerRef: o.providerRef,
            record: o.record,
          }
        : { to: 'unknown', reason: o.reason };
    }
    case 'rejected':
      return {
        to: 'failed',
        reason: `${report.code}: ${report.message}`,
        error: { code: report.code, message: `${report.code}: ${report.message}` },
      };
    case 'no-verdict':
      return { to: 'unknown', reason: `dispatch ended without an outcome: ${report.message}` };
  }
}

/** What one report made of its requests: the outcome's for a verdict, the report's own otherwise. */
export function reportedRequests(report: DispatchReport): { sends: number; requests?: ProviderRequest[] } {
  return report.kind === 'outcome' ? report.outcome : report;
}

/**
 * The owner's view of its action after its own report: the claim's answer (status `dispatching`, sent by
 * the owner), moved as the action will move it. The action's later snapshots replace it (they hold at
 * least as many audit entries).
 */
export function ownerViewAfterReport(claimed: ActionSnapshot, report: DispatchReport): ActionSnapshot {
  const move = reportedMove(report);
  const view: ActionSnapshot = {
    ...claimed,
    status: move.to,
    claimants: [...claimed.claimants],
    checks: [...claimed.checks],
    audit: [
      ...claimed.audit,
      { at: new Date(Date.now()).toISOString(), from: claimed.status, to: move.to, reason: move.reason },
    ],
    ...(move.providerRef ? { providerRef: move.providerRef } : {}),
    ...(move.record !== undefined ? { record: move.record } : {}),
    ...(move.error ? { error: move.error } : {}),
  };
  delete (view as { sendGranted?: boolean }).sendGranted;
  delete view.dispatcher;
  appendRequests(view, reportedRequests(report));
  return view;
}

/** Longest providerRef a report may carry (it becomes a search attribute and a column in the ledger). */
const MAX_PROVIDER_REF = 256;
/** Longest message or reason a report may carry; longer ones are cut. */
const MAX_TEXT = 2_000;
/** Requests a report may list (the executor keeps 50: activities/request-log.ts). */
const MAX_REPORTED_REQUESTS = 50;

/**
 * A report signal as the action takes it: rebuilt field by field from what arrived, so nothing but a
 * well-formed report of a known kind reaches the action's state (the signal is input from outside).
 * The request log goes through the same reader the executor's heartbeats do.
 */
export function parseDispatchReport(
  signal: unknown,
): { token: string; report: DispatchReport } | { problem: string; token?: string } {
  const { token, report } = (signal ?? {}) as { token?: unknown; report?: unknown };
  if (typeof token !== 'string' || token === '') return { problem: 'it carries no token' };
  if (!report || typeof report !== 'object') return { problem: 'it has no report', token };
  const r = report as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : undefined);
  const made = (from: Record<string, unknown>) => {
    const log = requestLogIn(from);
    const requests = log.requests.slice(-MAX_REPORTED_REQUESTS).map((q) => ({
      kind: q.kind,
      attempt: q.attempt,
      at: q.at.slice(0, 40),
      answer: q.answer.slice(0, 300),
    }));
    return { sends: log.sends, ...(requests.length ? { requests } : {}) };
  };
  switch (r.kind) {
    case 'outcome': {
      const o = (r.outcome ?? {}) as Record<string, unknown>;
      if (o.status === 'confirmed') {
        const ref = o.providerRef;
        if (typeof ref !== 'string' || ref === '' || ref.length > MAX_PROVIDER_REF) {
          return { problem: 'a confirmed outcome needs a providerRef of 1 to 256 characters', token };
        }
        if (o.via !== 'send' && o.via !== 'replay' && o.via !== 'lookup') {
          return { problem: 'a confirmed outcome says how: via send, replay or lookup', token };
        }
        const record = o.record === undefined ? null : (o.record as Json | null);
        return {
          token,
          report: {
            kind: 'outcome',
            outcome: { status: 'confirmed', providerRef: ref, record, via: o.via, ...made(o) },
          },
        };
      }
      if (o.status === 'unknown' && text(o.reason)) {
        return {
          token,
          report: { kind: 'outcome', outcome: { status: 'unknown', reason: text(o.reason)!, ...made(o) } },
        };
      }
      return { problem: 'its outcome is neither confirmed with a providerRef nor unknown with a reason', token };
    }
    case 'rejected':
      if (!isErrorCode(r.code) || !text(r.message)) {
        return { problem: 'a rejection needs a known error code and a message', token };
      }
      return { token, report: { kind: 'rejected', code: r.code, message: text(r.message)!, ...made(r) } };
    case 'no-verdict':
      if (!text(r.message)) return { problem: 'it needs a message', token };
      return { token, report: { kind: 'no-verdict', message: text(r.message)!, ...made(r) } };
    default:
      return { problem: `unknown kind ${JSON.stringify(r.kind)?.slice(0, 40)}`, token };
  }
}
