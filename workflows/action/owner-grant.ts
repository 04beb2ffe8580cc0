/**
 * The owner-sends handshake, kept for histories recorded by 0.2 (runs there claimed with `send` and sent their
 * action's first dispatch themselves; runs since act on the ledger row instead). The action stays the record: it
 * grants the send at most once per token, to the newest attempt of the owner's activity, and applies the report.
 *
 *   owner's claim asks to send (token, attempt) ─▶ on record at once
 *   the flow decides the first dispatch (`decide`) ─┬─ automatic, nothing in between ─▶ grant(token)
 *                                                   └─ anything else ─▶ the claim is answered without a grant
 *   grant ─▶ the owner's claim answers "send" ─▶ its report (outcome | rejected | no-verdict) ─▶ applied once
 *   a no-verdict report before any grant withdraws the request: the action sends itself
 */
import { condition, log } from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { DispatchReport, ReconciliationCheck } from '../../messages/action';
import { parseDispatchReport, reportedMove } from '../../messages/dispatch-report';

/** What the action records of the handshake: a line in its audit, an untrusted check. */
export interface GrantRecorder {
  note(reason: string): void;
  check(check: Omit<ReconciliationCheck, 'at'>): void;
}

export class OwnerGrant {
  /** The owner's request to send the first dispatch itself: the token of its first claim that asked. */
  private request: string | undefined;
  /** The dispatch granted to the owner: its token, how often a claim was answered "send", its report. */
  private open: { token: string; answers: number; report?: DispatchReport } | undefined;
  /** Set once the flow has decided who sends the first dispatch; the owner's claim answers then. */
  private decided = false;
  /** Per token: the highest activity attempt that claimed with it (only that one is granted). */
  private readonly attempts = new Map<string, number>();
  /** Tokens whose activity gave up before it was granted: never granted, the action sends itself. */
  private readonly withdrawn = new Set<string>();
  /** The token of the owner's latest claim: the owner that knows a report's outcome holds this one. */
  private latestToken: string | undefined;

  constructor(
    private readonly key: string,
    private readonly owner: string,
    private readonly recorder: GrantRecorder,
  ) {}

  /** A claim of the owner's asks to send: on record at once, before any wait. Returns the claiming attempt. */
  asked(send: { token: string; attempt?: number }): number {
    const attempt = Number.isInteger(send.attempt) && send.attempt! > 0 ? send.attempt! : 1;
    this.latestToken = send.token;
    this.attempts.set(send.token, Math.max(this.attempts.get(send.token) ?? 0, attempt));
    if (!this.withdrawn.has(send.token)) this.request ??= send.token;
    return attempt;
  }

  /** Whether the owner asked to send (and did not withdraw). */
  get requested(): boolean {
    return this.request !== undefined;
  }

  /** The flow decided who sends the first dispatch: claims waiting to hear are answered now. */
  decide(): void {
    this.decided = true;
  }

  /** The claim that asked to send may be answered: the first dispatch is decided and no report waits. */
  get answerable(): boolean {
    return this.decided && !this.open?.report;
  }

  /** A report waits to be applied: answers wait for it, so they show what it made of the action. */
  get reportWaiting(): boolean {
    return this.open?.report !== undefined;
  }

  /** The owner sends now: a grant is open and not reported yet. */
  get sending(): boolean {
    return this.open !== undefined && !this.open.report;
  }

  /**
   * The grant for one claim: only the newest attempt of the granted token is told to send (an older one whose claim
   * was held up has timed out and must not send beside it); `firstGrant` says no earlier answer said "send".
   */
  answer(token: string, attempt: number): { sendGranted: true; firstGrant: boolean } | undefined {
    const open = this.open;
    if (!open || open.token !== token || open.report || attempt !== this.attempts.get(token)) return undefined;
    const firstGrant = open.answers === 0;
    open.answers++;
    return { sendGranted: true, firstGrant };
  }

  /**
   * Grants the dispatch to the owner and waits for its report, at most `window` (the owner's activity has no
   * attempt left by then). `quietFor` is the owner when it holds the report's token: it knows what it reported.
   */
  async grantAndAwaitReport(window: Duration): Promise<{ report: DispatchReport | undefined; quietFor?: string }> {
    const token = this.request!;
    this.open = { token, answers: 0 };
    this.recorder.note(`the owner ${this.owner} sends this dispatch itself, with the key`);
    await condition(() => this.open?.report !== undefined, window);
    const report = this.open?.report;
    this.open = undefined;
    return { report, ...(this.latestToken === token ? { quietFor: this.owner } : {}) };
  }

  /**
   * An owner's dispatch report (input from outside: rebuilt by parseDispatchReport). Only the open grant's token
   * counts, once. A no-verdict report before any grant withdraws the owner's request. Any other report is kept in
   * the audit (and, when it is the owner's own, as an untrusted check with what it says), and changes nothing.
   */
  take(signal: unknown): void {
    const parsed = parseDispatchReport(signal);
    if ('problem' in parsed) return this.ignore(parsed.problem);
    const { token, report } = parsed;
    if (!this.attempts.has(token)) return this.ignore('it carries a token no claim of the owner carried');
    const open = this.open;
    if (!open && !this.decided && report.kind === 'no-verdict' && token === this.request) {
      this.withdrawn.add(token);
      this.request = undefined;
      this.recorder.note(
        `the owner gave up before it was granted the send (${report.message}); the action sends itself`,
      );
      return;
    }
    if (open?.token === token && !open.report) {
      open.report = report;
      return;
    }
    const why = open
      ? open.token === token
        ? 'the dispatch was reported already'
        : 'it carries another token than the grant'
      : 'no dispatch is granted to the owner now';
    this.ignore(why);
    const move = reportedMove(report);
    this.recorder.check({
      kind: 'evidence',
      found: move.to === 'confirmed',
      trustworthy: false,
      detail: `a report of the owner's that was not applied (${why}) says ${move.to}: ${move.reason}`,
    });
  }

  private ignore(why: string): void {
    log.warn('dispatch report ignored', { key: this.key, why });
    this.recorder.note(`dispatch report ignored: ${why}`);
  }
}
