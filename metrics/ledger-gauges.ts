/**
 * The gauges that describe the actions still waiting, read from the ledger rather than counted in memory: every
 * worker of a stack reports the same numbers (take `max` across workers), a restarted worker reports them at once,
 * and an action whose worker died is still counted. Each poll sets every series it saw on the previous poll,
 * to 0 when its group emptied, so that a resolved action leaves no stale value behind.
 */
import type { ActionLedger } from '../ledger';
import type { RetrysafeMetrics } from './instruments';
import { label } from './instruments';

/** How long an action may stay unresolved before someone is paged, per tenant (`*` for the others); seconds. */
export type EscalationWindows = Readonly<Record<string, number>>;

/** The source article's target: escalate an action that stayed unresolved for a day. */
export const DEFAULT_ESCALATION_WINDOW_SECONDS = 24 * 60 * 60;

/** How often the worker reads the ledger for its gauges; a scrape every 15 s sees at most one poll old. */
export const DEFAULT_LEDGER_POLL_MS = 10_000;

/** What the open-action gauges are read from and set on. */
export interface LedgerGaugeOptions {
  ledger: ActionLedger;
  metrics: RetrysafeMetrics;
  escalationWindows?: EscalationWindows;
  pollMs?: number;
  /** The clock the ages are taken on (tests). */
  now?: () => number;
  /** Told when a poll fails (the ledger is down); the gauges keep their last values and the next poll tries again. */
  onError?: (err: Error) => void;
}

/** Reads the ledger once and sets the gauges; returns a function that does the next poll the same way. */
export function ledgerGaugeSetter(opts: LedgerGaugeOptions): () => Promise<void> {
  const { ledger, metrics } = opts;
  const now = opts.now ?? Date.now;
  const windows = opts.escalationWindows ?? {};
  const fallback = windows['*'] ?? DEFAULT_ESCALATION_WINDOW_SECONDS;
  /** The series set on the last poll, by their labels joined: the ones to zero when their group empties. */
  let previous = new Map<string, Record<string, string>>();
  const tenantsSeen = new Set<string>(Object.keys(windows).filter((t) => t !== '*'));
  return async () => {
    const stats = await ledger.openActionStats();
    const seen = new Map<string, Record<string, string>>();
    for (const g of stats.groups) {
      const tags = { tool: label(g.operation), tenant: label(g.tenant), status: g.status };
      seen.set(`${tags.tool}/${tags.tenant}/${tags.status}`, tags);
      tenantsSeen.add(g.tenant);
      metrics.gauges.actionsOpen.set(g.count, tags);
      metrics.gauges.oldestAgeSeconds.set(Math.max(0, (now() - Date.parse(g.oldestClaimedAt)) / 1000), tags);
    }
    for (const [id, tags] of previous) {
      if (seen.has(id)) continue;
      metrics.gauges.actionsOpen.set(0, tags);
      metrics.gauges.oldestAgeSeconds.set(0, tags);
    }
    previous = seen;
    for (const tenant of tenantsSeen) {
      metrics.gauges.escalationWindowSeconds.set(windows[tenant] ?? fallback, { tenant: label(tenant) });
    }
    for (const [kind, n] of Object.entries(stats.alarms)) metrics.gauges.ledgerAlarms.set(n, { kind });
  };
}

/**
 * Polls the ledger every `pollMs` until the returned stop is called (at once, then on the interval; one poll at a
 * time). A failed poll is reported to `onError` and does not stop the next.
 */
export function pollLedgerGauges(opts: LedgerGaugeOptions): {
  /** Stops polling, after the poll under way. */
  stop(): Promise<void>;
} {
  const poll = ledgerGaugeSetter(opts);
  const onError = opts.onError ?? (() => undefined);
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = () => {
    running = poll()
      .catch((err: unknown) => onError(err as Error))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.pollMs ?? DEFAULT_LEDGER_POLL_MS).unref();
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * Parses escalation windows as `RETRYSAFE_ESCALATION_WINDOWS` gives them: `acme=4h,globex=30m,*=24h` (units s, m,
 * h, d). Throws naming the entry that does not parse.
 */
export function parseEscalationWindows(text: string): Record<string, number> {
  const windows: Record<string, number> = {};
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^([A-Za-z0-9_.:*-]+)\s*=\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(entry);
    if (!m) throw new Error(`"${entry}" is not tenant=duration (for example acme=4h or *=24h; units s, m, h, d)`);
    const seconds = Number(m[2]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[3] as 's' | 'm' | 'h' | 'd'];
    if (seconds <= 0) throw new Error(`"${entry}": the window must be longer than 0`);
    windows[m[1]!] = seconds;
  }
  return windows;
}
