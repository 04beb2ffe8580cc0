/**
 * The clock a worker writes and judges a row's lease by: milliseconds since the epoch, as `Date.now()` gives them.
 * A lease only says when someone else may take the row over; no write and no send trusts it, since each is fenced by
 * the row's epoch (compare-and-swap). A worker whose clock runs off therefore takes rows over early or late, never
 * twice. The plugin's `leaseClockOffsetMs` (RETRYSAFE_LEASE_CLOCK_OFFSET_MS) runs it off on purpose, for fault
 * injection (`npm run chaos -- --faults clock-skew`).
 */
export type LeaseClock = () => number;

export const systemLeaseClock: LeaseClock = () => Date.now();

/** The machine's clock, `offsetMs` ahead (negative: behind). */
export function offsetLeaseClock(offsetMs = 0): LeaseClock {
  return offsetMs === 0 ? systemLeaseClock : () => Date.now() + offsetMs;
}
