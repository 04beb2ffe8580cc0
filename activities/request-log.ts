import type { Context } from '@temporalio/activity';
import {
  PENDING_ANSWER,
  requestLogIn,
  type RequestLogEntry,
  type RequestLogDetails,
} from '../policies/provider-requests';

/**
 * The executor's record of every request it made to a provider for one dispatch, across activity
 * attempts. An attempt that dies (a SIGKILLed worker, a heartbeat timeout) cannot report, so the record
 * travels in the activity's heartbeat details: the next attempt starts from the last details the server
 * received, and a request that was in flight there becomes "no answer recorded". This is how `sends`
 * counts a request that a dead attempt made and the provider received.
 *
 * It is a lower bound: heartbeats are throttled, so a request made moments before a crash, in an attempt
 * that had already heartbeated, may not have reached the server. The first request of an attempt is in
 * that attempt's first heartbeat, which is sent at once.
 */
export const MAX_RECORDED_REQUESTS = 50;

export class RequestLog {
  private readonly entries: RequestLogEntry[];
  private sent: number;

  private constructor(
    private readonly attempt: number,
    previous: RequestLogDetails,
    private readonly now: () => number,
  ) {
    this.entries = previous.requests;
    this.sent = previous.sends;
  }

  /**
   * The log of this activity attempt, continuing the one the previous attempt heartbeated (a local activity, a run's
   * act, has none: what an execution that died may have sent is on the action's row, as a `dispatching` entry).
   */
  static resume(ctx: Context, now: () => number = Date.now): RequestLog {
    return new RequestLog(ctx.info.attempt, requestLogIn(ctx.info.heartbeatDetails), now);
  }

  /** Records a request about to be made; give its answer with `answered`. */
  start(kind: RequestLogEntry['kind']): RequestLogEntry {
    const entry: RequestLogEntry = {
      kind,
      attempt: this.attempt,
      at: new Date(this.now()).toISOString(),
      answer: PENDING_ANSWER,
    };
    if (kind === 'send') this.sent++;
    this.entries.push(entry);
    // Keep the first request (the one that matters most for "was it sent?") and the latest ones.
    if (this.entries.length > MAX_RECORDED_REQUESTS) this.entries.splice(1, 1);
    return entry;
  }

  answered(entry: RequestLogEntry, answer: string): void {
    entry.answer = answer.slice(0, 300);
  }

  /** Requests sent to the provider (lookups excluded), including those of attempts that died. */
  get sends(): number {
    return this.sent;
  }

  /** What the heartbeat carries and the outcome reports. */
  details(): RequestLogDetails {
    return { requests: this.entries.map((r) => ({ ...r })), sends: this.sent };
  }
}
