/**
 * Crash injection for tests and chaos runs: at a named dangerous point the worker process SIGKILLs
 * itself, exactly as a machine failure would end it (no finally blocks, no flushed buffers).
 * Configured from RETRYSAFE_CRASH_AT at the worker entry point, e.g. `after-commit:charge`.
 */
export const CRASH_POINTS = [
  'before-send',
  'after-commit',
  'before-lookup',
  'after-row-claimed',
  'before-row-settles',
  'after-row-settled',
] as const;
/**
 * A dangerous point: in the executor, before the provider is called, after it committed (before the reply is
 * recorded), or before a lookup; on the record-first path, once the run's act holds the action's ledger row (nothing
 * sent yet), after the executor's verdict before the row records it, and after the row settled before the run's
 * workflow task records the act's verdict (the act runs again with that task and must find the settled row).
 */
export type CrashPoint = (typeof CRASH_POINTS)[number];

/**
 * Where to crash: a point, optionally only for one operation (`after-commit:charge` in `RETRYSAFE_CRASH_AT`). With
 * `stall` (`stall:after-row-claimed:charge`) the worker stops itself there with SIGSTOP instead, once: a stalled owner,
 * which runs on from the same line when someone sends it SIGCONT.
 */
export interface CrashSpec {
  point: CrashPoint;
  /** Only for this operation; any when absent. */
  operation?: string;
  /** SIGSTOP (once) instead of SIGKILL. */
  stall?: boolean;
}

/**
 * Called at each crash point an activity passes; `killAt` returns one that SIGKILLs the process when a spec matches.
 */
export type CrashHook = (point: CrashPoint, operation: string) => void;

/** The crash hook of a normal worker: does nothing. */
export const noCrashes: CrashHook = () => undefined;

/**
 * Parses `RETRYSAFE_CRASH_AT` (`point[:operation]`, comma-separated; empty for none). Throws naming an unknown point.
 */
export function parseCrashSpecs(value: string | undefined): CrashSpec[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const stall = entry.startsWith('stall:');
      const [point, operation] = (stall ? entry.slice('stall:'.length) : entry).split(':');
      if (!(CRASH_POINTS as readonly string[]).includes(point)) {
        throw new Error(
          `RETRYSAFE_CRASH_AT: unknown crash point ${JSON.stringify(point)}; use one of ${CRASH_POINTS.join(', ')}`,
        );
      }
      return { point: point as CrashPoint, ...(operation ? { operation } : {}), ...(stall ? { stall: true } : {}) };
    });
}

/**
 * A hook that kills this process with SIGKILL the first time a matching point is reached (or, for a `stall` spec,
 * stops it with SIGSTOP the first time, and lets it run on once continued).
 */
export function killAt(specs: CrashSpec[], beforeKill?: (point: CrashPoint, operation: string) => void): CrashHook {
  if (specs.length === 0) return noCrashes;
  const stalled = new Set<CrashSpec>();
  return (point, operation) => {
    const spec = specs.find((s) => s.point === point && (!s.operation || s.operation === operation) && !stalled.has(s));
    if (!spec) return;
    beforeKill?.(point, operation);
    if (!spec.stall) process.kill(process.pid, 'SIGKILL');
    stalled.add(spec);
    process.kill(process.pid, 'SIGSTOP');
  };
}
