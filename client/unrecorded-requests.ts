import type { AuditEntry, RecordedRequest } from '../messages/action';

/**
 * How many requests may have reached the provider with no record of them: the sends an action's record proves were
 * possible, less the ones its process kept. Every send is preceded by a `dispatching` entry on the ledger row (the
 * run's fence, or the executor's entry for an action workflow), and every request an attempt makes travels in its
 * heartbeats; an attempt killed between the two (a SIGKILL past commit, its last heartbeat throttled away) leaves the
 * entry and no request. Two traces of such an attempt, in the ledger's trail and in the requests kept:
 *
 *   - a dispatch on record with no request recorded after it (before the next dispatch on record);
 *   - a dispatch whose requests start at attempt N > 1 with earlier attempts missing: they ran and left nothing.
 *
 * Both may point at the same attempt, so the larger count is taken, never their sum: a lower bound of attempts that
 * passed the fence and left no record, each of which may have sent once. Zero when every dispatch has its requests.
 */
export function unrecordedRequests(trail: readonly AuditEntry[], requests: readonly RecordedRequest[] = []): number {
  const sends = requests.filter((r) => r.kind === 'send');
  return Math.max(dispatchesWithoutRequests(trail, sends), attemptsWithoutRequests(requests));
}

/**
 * The `dispatching` entries that stand for a send, in order. An action workflow that takes the row over from a run's
 * act that had dispatched restates the record as it starts its own: `planned` again, then `dispatching` "dispatched by
 * the run's act" (workflows/action/policy.ts), with nothing sent. That `dispatching`, right after a `planned` re-entry
 * that followed a dispatched row, is the earlier dispatch told again, not another one.
 */
export function dispatchesOnRecord(trail: readonly AuditEntry[]): AuditEntry[] {
  return trail.filter((entry, i) => entry.to === 'dispatching' && !restatesTakenOverDispatch(trail, i));
}

function restatesTakenOverDispatch(trail: readonly AuditEntry[], i: number): boolean {
  const reentry = trail[i - 1];
  const before = trail[i - 2];
  return reentry?.to === 'planned' && before !== undefined && before.to !== 'planned';
}

/** Dispatches on record after which no send was recorded before the next one. */
function dispatchesWithoutRequests(trail: readonly AuditEntry[], sends: readonly RecordedRequest[]): number {
  const starts = dispatchesOnRecord(trail).map((e) => Date.parse(e.at));
  return starts.filter((start, i) => {
    const end = starts[i + 1] ?? Infinity;
    // A send stamped before the first dispatch on record (another host's clock) belongs to that first one.
    return !sends.some((r) => {
      const at = Date.parse(r.at);
      return (i === 0 || at >= start) && at < end;
    });
  }).length;
}

/** Attempts of a dispatch before its latest send that recorded no request at all. */
function attemptsWithoutRequests(requests: readonly RecordedRequest[]): number {
  let missing = 0;
  for (const dispatch of new Set(requests.map((r) => r.dispatch))) {
    const made = requests.filter((r) => r.dispatch === dispatch);
    const lastSend = Math.max(0, ...made.filter((r) => r.kind === 'send').map((r) => r.attempt));
    const recorded = new Set(made.map((r) => r.attempt));
    for (let attempt = 1; attempt < lastSend; attempt++) if (!recorded.has(attempt)) missing++;
  }
  return missing;
}
