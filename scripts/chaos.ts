/**
 * `npm run chaos`: crash injection against the real stack. Kills worker processes at the dangerous points
 * of provider calls under provider faults, restarts the dev server, and counts effects at the providers.
 *   npm run chaos -- --crashes 100 --seed 42 --scenario renewal --baseline
 * Exit code 0 when retrysafe shows no duplicate, no lost effect and nothing unexplained over every planned
 * crash (or every crash that fit in --minutes); 1 otherwise; 2 for bad arguments; 130 after Ctrl-C. The
 * baseline's duplicates are its expected result and do not fail the run.
 */
import { UsageError } from '../cli/ops/errors';
import { CHAOS_USAGE, parseChaosArgs } from './chaos/args';
import { formatClusterKills, formatTable, toJson } from './chaos/report';
import { runChaos } from './chaos/run';

async function main(): Promise<number> {
  let args;
  try {
    args = parseChaosArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${CHAOS_USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${CHAOS_USAGE}\n`);
    return 0;
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const stop = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    progress('chaos: interrupted; the running iterations finish and are reported (Ctrl-C again quits at once)');
    stop.abort('interrupted');
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const budget = args.minutes
    ? setTimeout(() => stop.abort(`the ${args.minutes}-minute budget ran out`), args.minutes * 60_000)
    : undefined;
  // With --json, stdout carries only the JSON object, so the table goes to stderr.
  const say = args.json ? progress : (line: string) => process.stdout.write(`${line}\n`);
  const report = await runChaos({
    crashes: args.crashes,
    ...(args.seed !== undefined ? { seed: args.seed } : {}),
    scenarios: args.scenario,
    concurrency: args.concurrency,
    baseline: args.baseline,
    target: args.target,
    ...(args['restart-rate'] !== undefined ? { restartRate: args['restart-rate'] } : {}),
    ...(args.only ? { only: args.only } : {}),
    ...(args.faults ? { faults: args.faults } : {}),
    log: progress,
    stop: stop.signal,
  });
  clearTimeout(budget);
  const t = report.retrysafe.totals;
  say('');
  say(
    `chaos: seed ${report.seed} on the ${report.target} · ${t.crashes} ${args.faults ? 'faults' : 'SIGKILLs'} of ${report.crashesRequested} requested · ` +
      `${report.serverRestarts} server restart(s), ${report.workersReplacedAfterRestart} worker(s) replaced after one · ` +
      `${(report.durationMs / 1000).toFixed(0)} s`,
  );
  if (report.cluster) say(`cluster kills, per service:\n${formatClusterKills(report.cluster)}`);
  if (t.ledgerRows !== undefined) {
    say(`ledger: ${t.ledgerRows} row(s) checked against the providers, ${t.ledgerOutOfStep ?? 0} out of step`);
  }
  if (report.stoppedEarly)
    say(`stopped early (${report.stoppedEarly}): the table covers the ${t.crashes} crashes that ran`);
  say(formatTable(report));
  for (const f of report.failures) {
    say(`✗ ${f.plan}\n    ${f.reasons.join('\n    ')}\n    ${f.notes.join(' · ')}\n    rerun: ${f.rerun}`);
  }
  say(`rerun: ${report.rerun}`);
  say(`worker and provider logs: ${report.logDir}`);
  if (args.json) process.stdout.write(`${JSON.stringify(toJson(report))}\n`);
  const clean = t.duplicates === 0 && t.lost === 0 && t.unexplained === 0;
  if (interrupted) return 130;
  // A time budget is a chosen length, not a failure; a missing crash without one is.
  const ran = report.iterations.filter((r) => r.variant === 'retrysafe').length;
  const complete = report.stoppedEarly ? ran > 0 && t.crashes === ran : t.crashes === report.crashesRequested;
  return clean && complete ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
