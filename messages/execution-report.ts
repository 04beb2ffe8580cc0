/**
 * What a report of an execution means, in one place: a run's act settles the ledger row with it
 * (activities/act-on-record.ts) and the action workflow applies its executor's verdict the same way
 * (workflows/action/dispatch.ts), so the two cannot drift apart.
 */
import type { ExecutionReport } from './action';
import type { RequestLogEntry } from '../policies/provider-requests';
import type { Json } from '../policies/tool';

export interface ReportedMove {
  to: 'confirmed' | 'unknown' | 'failed';
  reason: string;
  providerRef?: string;
  record?: Json | null;
  error?: { code: string; message: string };
}

/** The status change a report makes: the executor's verdict, its refusal, or unknown when there was none. */
export function reportedMove(report: ExecutionReport): ReportedMove {
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
export function reportedRequests(report: ExecutionReport): { sends: number; requests?: RequestLogEntry[] } {
  return report.kind === 'outcome' ? report.outcome : report;
}
