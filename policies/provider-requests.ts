/**
 * The record of the requests an action made to its provider, as the executor keeps it (activities/
 * request-log.ts) and the action shows it (`ops show`): one entry per request, with the activity attempt
 * that made it and what the provider answered. Pure, so workflow code can read it too.
 */
export interface RequestLogEntry {
  /** `send` calls the tool's execute; `lookup` asks the provider whether an earlier send took effect. */
  kind: 'send' | 'lookup';
  /** The activity attempt that made it (attempts after the first follow a dead or timed-out one). */
  attempt: number;
  at: string;
  /** What the provider answered, e.g. `committed ch_1`, `not committed: HTTP 503`, `ambiguous: socket hang up`. */
  answer: string;
}

/** The part of heartbeat details (an activity's, or a timed-out activity's last ones) that carries the log. */
export interface RequestLogDetails {
  requests: RequestLogEntry[];
  /** Requests sent in all, which the list may no longer hold in full (it keeps the first and the latest). */
  sends: number;
}

/** The answer of a request that is in flight; one that stays so was lost with its attempt. */
export const PENDING_ANSWER = 'pending';
export const LOST_ANSWER = 'no answer recorded: the attempt ended (worker lost or timed out) before it kept the reply';

/**
 * Reads the log out of heartbeat details; anything malformed reads as an empty log. A request still
 * pending there belonged to an attempt that ended: its answer is lost.
 */
export function requestLogIn(details: unknown): RequestLogDetails {
  const raw = details as { requests?: unknown; sends?: unknown } | undefined;
  const requests = Array.isArray(raw?.requests)
    ? raw.requests
        .filter(
          (r): r is RequestLogEntry =>
            typeof r === 'object' &&
            r !== null &&
            (r.kind === 'send' || r.kind === 'lookup') &&
            typeof r.attempt === 'number' &&
            typeof r.at === 'string' &&
            typeof r.answer === 'string',
        )
        .map((r) => (r.answer === PENDING_ANSWER ? { ...r, answer: LOST_ANSWER } : r))
    : [];
  const counted = requests.filter((r) => r.kind === 'send').length;
  const sends = typeof raw?.sends === 'number' && Number.isInteger(raw.sends) ? Math.max(raw.sends, counted) : counted;
  return { requests, sends };
}

/** Requests kept in an action's snapshot; the count in `sends` is kept whatever the list holds. */
const MAX_SHOWN_REQUESTS = 50;

/**
 * Adds one dispatch's requests to a snapshot: its count to `sends`, its entries (the first of the action
 * and the latest, MAX_SHOWN_REQUESTS in all) to `requests`, each numbered with the snapshot's dispatch.
 */
export function appendRequests(
  snap: { sends: number; dispatches: number; requests?: Array<RequestLogEntry & { dispatch: number }> },
  made: { sends?: number; requests?: RequestLogEntry[] },
): void {
  snap.sends += made.sends ?? 0;
  const dispatch = snap.dispatches;
  const entries = (made.requests ?? []).map((r) => ({ ...r, dispatch }));
  if (entries.length === 0) return;
  const all = [...(snap.requests ?? []), ...entries];
  // The first request (was it ever sent?) and the latest ones: the count in `sends` is kept whatever is cut.
  snap.requests = all.length <= MAX_SHOWN_REQUESTS ? all : [all[0], ...all.slice(-(MAX_SHOWN_REQUESTS - 1))];
}
