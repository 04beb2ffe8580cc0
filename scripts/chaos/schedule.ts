import type { Iteration } from './iteration';
import { summarize } from './report';
import type { IterationPlan, IterationResult, Variant } from './types';

/** One iteration to run: a plan under retrysafe or under the bare baseline. */
export interface Work {
  variant: Variant;
  plan: IterationPlan;
}

export interface Schedule {
  /** Every iteration to run, retrysafe's first, in plan order. */
  work: readonly Work[];
  concurrency: number;
  /** The iteration for `work` on lane `lane` (0 … concurrency-1); it spawns nothing until prepared. */
  make: (work: Work, lane: number) => Iteration;
  /** Each result as it comes; the scheduler also logs a progress line and the caller's line for it. */
  results: IterationResult[];
  log: (line: string) => void;
  describe: (r: IterationResult) => string;
  stop?: AbortSignal;
  /**
   * Called when an iteration has begun (its fault or crash done, its successor polling), with every iteration then in
   * flight on any lane, itself included: a `server-restart` iteration restarts the server here, and the restart
   * checks that the workers of all of them reconnect.
   */
  afterBegin?: (iteration: Iteration, work: Work, inFlight: readonly Iteration[]) => Promise<void>;
}

export interface Ran {
  /** Why and where the run stopped before its end (Ctrl-C, --minutes). */
  stoppedEarly?: string;
}

/**
 * Whether a run goes in batches: only when some plan restarts the dev server between its batch's crashes and its
 * recovery (`--restart-rate`), which needs every iteration of a batch at the same point. A `server-restart` fault
 * restarts it at its own iteration's moment instead (afterBegin), so lanes run on under it.
 */
export function needsBatches(work: readonly Work[]): boolean {
  return work.some((w) => w.plan.serverRestart && !restartsAtItsMoment(w));
}

/** A `server-restart` fault: the server restarts when this iteration's provider holds its reply. */
export const restartsAtItsMoment = (w: Work) => w.plan.serverRestart && w.plan.fault?.kind === 'server-restart';

/**
 * Each lane takes the next iteration as soon as its last one has settled and been counted. In batches, a batch
 * lasts as long as its slowest iteration: a `worker-pause` holds its worker stopped past the lease (about 70 s)
 * while the other lanes' iterations settle in about 12 s and then wait. The lanes share nothing an iteration
 * faults but the dev server (`server-restart`), which any iteration of a batch already met at its own point.
 * As in batches, a lane's next doomed worker starts while its current iteration recovers.
 */
export async function runInLanes(s: Schedule): Promise<Ran> {
  let taken = 0;
  let begun = 0;
  const started = Date.now();
  const take = () => (taken < s.work.length ? s.work[taken++] : undefined);
  const inFlight = new Set<Iteration>();
  const lane = async (index: number) => {
    let item = s.stop?.aborted ? undefined : take();
    let current = item && s.make(item, index);
    current?.prepare();
    while (current && item) {
      if (s.stop?.aborted) {
        await current.abandon();
        return;
      }
      begun++;
      const iterationStarted = Date.now();
      inFlight.add(current);
      await current.begin();
      await s.afterBegin?.(current, item, [...inFlight]);
      const following = take();
      const next = following && s.make(following, index);
      next?.prepare();
      let result: IterationResult;
      try {
        result = await current.finish();
      } catch (err) {
        await next?.abandon();
        throw err;
      } finally {
        inFlight.delete(current);
      }
      s.results.push(result);
      s.log(laneProgressLine(result, s.results, s.work, iterationStarted, started));
      s.log(s.describe(result));
      current = next;
      item = following;
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.concurrency, s.work.length) }, (_, i) => lane(i)));
  if (begun === s.work.length) return {};
  const stoppedEarly = `${String(s.stop?.reason ?? 'stopped')}, with ${s.work.length - begun} of ${s.work.length} iteration(s) not started`;
  s.log(`stopping: ${stoppedEarly}`);
  return { stoppedEarly };
}

/**
 * `[retrysafe] 37/500 (#38 renewal, 13.1 s) · dup 0 · lost 0 · unexplained 0 · review 2 · 14.3/min`: the variant's
 * count so far, the iteration just counted and how long it took, and the pace of the run.
 */
function laneProgressLine(
  r: IterationResult,
  all: readonly IterationResult[],
  work: readonly Work[],
  iterationStarted: number,
  runStarted: number,
): string {
  const mine = all.filter((x) => x.variant === r.variant);
  const { totals } = summarize(mine);
  const of = work.filter((w) => w.variant === r.variant).length;
  const perMinute = all.length / ((Date.now() - runStarted) / 60_000);
  return (
    `[${r.variant}] ${mine.length}/${of} (#${r.plan.index} ${r.scenario}, ${((Date.now() - iterationStarted) / 1000).toFixed(1)} s)` +
    ` · dup ${totals.duplicates} · lost ${totals.lost} · unexplained ${totals.unexplained}` +
    ` · review ${totals.needsReview} · ${perMinute.toFixed(1)}/min`
  );
}
