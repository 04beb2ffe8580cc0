/**
 * `npm run bench:scale`: how retrysafe's cost grows, on one dev server and one worker: a run of many actions
 * (its history, and the hundredth action's time against the first's), bursts of actions started at once (p50,
 * p99, the worker's memory), and `ops queue` over a tenant of thousands of actions awaiting confirmation.
 * Growth is fitted as cost ≈ size^b; anything past b = 1.2 is flagged as faster than linear.
 */
import { parseScaleArgs, SCALE_USAGE } from './bench/scale/args';
import { SUPERLINEAR_EXPONENT, type Growth } from './bench/scale/growth';
import { describeCpu, type CpuByProcess } from './bench/process-cpu';
import { runScale, type ScaleReport } from './bench/scale/run';
import { UsageError } from '../cli/ops/errors';

async function main(): Promise<number> {
  let args;
  try {
    args = parseScaleArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${SCALE_USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${SCALE_USAGE}\n`);
    return 0;
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const say = args.json ? progress : (line: string) => process.stdout.write(`${line}\n`);
  const report = await runScale(args, progress);
  for (const line of formatScale(report)) say(line);
  if (args.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  return 0;
}

const growth = (what: string, g: Growth | undefined) =>
  g === undefined
    ? `${what}: too few points to fit`
    : `${what} grows as size^${g.exponent}${g.superlinear ? `  ← FASTER THAN LINEAR (past ^${SUPERLINEAR_EXPONENT})` : ''}`;

/** Actions per second that `cores` could serve at this CPU per action, if nothing else held them back. */
function ceiling(cpu: CpuByProcess, cores: number): number {
  return cpu.total > 0 ? Math.round((cores * 1000) / cpu.total) : 0;
}

export function formatScale(r: ScaleReport): string[] {
  const out = ['', `bench:scale, ${(r.durationMs / 1000).toFixed(0)} s`];
  const l = r.longRun;
  if (l) {
    out.push(
      `one run of ${l.actions} actions (${l.confirmed} confirmed) in ${(l.wallMs / 1000).toFixed(1)} s: ` +
        `run history ${l.historyEvents} events, ${(l.historyBytes / 1024).toFixed(0)} KiB ` +
        `(${l.eventsPerAction} events, ${(l.bytesPerAction / 1024).toFixed(1)} KiB per action)`,
    );
    if (l.drift) {
      out.push(
        `  per action: first ten ${l.drift.first} ms, last ten ${l.drift.last} ms (×${l.drift.ratio}); ` +
          growth('action time against its position', l.perActionGrowth),
      );
    }
  }
  if (r.concurrent.length) {
    out.push('actions started at once on one worker (each burst beside as many bare activities):');
    for (const ratio of r.ratios) {
      const mine = r.concurrent.filter((c) => c.actions === ratio.actions);
      const bare = r.bare.filter((b) => b.actions === ratio.actions);
      out.push(
        `  ${String(ratio.actions).padStart(5)}: retrysafe throughput ×${ratio.throughputRatio} of bare over ` +
          `${ratio.rounds} round(s) (${ratio.perRound.map((x) => `×${x}`).join(', ')})`,
      );
      const cpu = ratio.cpuMsPerAction;
      if (cpu) {
        out.push(
          `         CPU per action: retrysafe ${describeCpu(cpu.retrysafe)}; bare ${describeCpu(cpu.bare)}; ` +
            `on ${r.cores} cores at most ${ceiling(cpu.retrysafe, r.cores)}/s and ${ceiling(cpu.bare, r.cores)}/s`,
        );
      }
      mine.forEach((c, i) => {
        out.push(
          `         retrysafe: p50 ${c.p50} ms, p99 ${c.p99} ms, max ${c.max} ms, ${c.throughputPerSec}/s over ` +
            `${(c.wallMs / 1000).toFixed(1)} s, ${c.confirmed} confirmed; worker ${c.rssBeforeMiB ?? '?'} → peak ` +
            `${c.rssPeakMiB ?? '?'} MiB (${c.kibPerActionInFlight ?? '?'} KiB per action in flight)`,
        );
        const b = bare[i];
        if (b) {
          out.push(
            `         bare:      p50 ${b.p50} ms, p99 ${b.p99} ms, ${b.throughputPerSec}/s, peak ${b.rssPeakMiB ?? '?'} MiB`,
          );
        }
      });
    }
    const g = r.concurrentGrowth;
    if (g) {
      out.push(`  ${growth('burst wall time', g.wall)}`);
      out.push(`  ${growth('p50', g.p50)}`);
      out.push(`  ${growth('worker memory above idle', g.rssAboveIdle)}`);
    }
  }
  if (r.queue.length) {
    out.push('ops queue (its own process, --json) over one tenant of actions awaiting confirmation:');
    for (const p of r.queue) {
      out.push(
        `  ${String(p.actions).padStart(6)} actions: ${p.queueMs} ms (runs ${p.runsMs.join(', ')}; ` +
          `${p.readMs} ms beyond an empty tenant), ${p.rows} rows; filled at ${p.claimsPerSec} claims/s`,
      );
    }
    out.push(`  ${growth('time beyond an empty tenant', r.queueGrowth)}`);
  }
  return out;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
