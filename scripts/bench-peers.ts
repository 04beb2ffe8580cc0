/**
 * `npm run bench:peers`: retrysafe beside Restate and DBOS Transact, each running the same keyed side effects
 * against the same sandbox providers with the same keys: one charge and the three-step renewal, sequential and
 * concurrent, in interleaved rounds; then SIGKILL after the provider committed, through the key-less email
 * provider and the lagging ticket provider, with the effects counted at the provider.
 */
import { z } from 'zod';
import { parseArgv, validateArgs, type FlagSpecs } from '../cli/ops/args';
import { UsageError } from '../cli/ops/errors';
import { count } from './bench/args';
import { runPeerBench, type PeerBenchReport } from './bench/peers/run';

const FLAGS: FlagSpecs = {
  iterations: { type: 'string' },
  concurrency: { type: 'string' },
  repeats: { type: 'string' },
  crashes: { type: 'string' },
  json: { type: 'boolean' },
};

const PeerArgs = z.object({
  iterations: count('a whole number of operations per leg, level and round', 1, 10_000).default(20),
  concurrency: count('a whole number of operations in flight', 2, 200).default(10),
  repeats: count('a whole number of rounds', 1, 100).default(3),
  crashes: count('a whole number of crash iterations per system and provider (0 skips them)', 0, 200).default(5),
  json: z.boolean().default(false),
});

const USAGE = `Usage: npm run bench:peers -- [options]
  --iterations N   operations per system, operation, load level and round (default 20)
  --concurrency K  the concurrent load level; sequential is measured too (default 10)
  --repeats R      rounds, every system in turn within each (default 3)
  --crashes C      SIGKILL-after-commit iterations per system and provider (default 5; 0 skips them)
  --json           one JSON object on the last line of stdout; the table goes to stderr`;

async function main(): Promise<number> {
  let args;
  try {
    const { flags, positionals, help } = parseArgv(process.argv.slice(2), FLAGS);
    if (help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    args = validateArgs(PeerArgs, flags);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const say = args.json ? progress : (line: string) => process.stdout.write(`${line}\n`);
  const report = await runPeerBench({ ...args, log: progress });
  for (const line of formatPeers(report)) say(line);
  if (args.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  return 0;
}

function formatPeers(r: PeerBenchReport): string[] {
  const range = (xs: number[]) => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    return lo === hi ? `${lo}` : `${lo}–${hi}`;
  };
  const out = [
    '',
    `bench:peers on ${r.machine}, ${r.repeats} round(s) of ${r.iterations} per leg, ${(r.durationMs / 1000).toFixed(0)} s`,
    ...Object.entries(r.versions).map(([name, v]) => `  ${name}: ${v}`),
    'operation  system                    load   p50 ms (rounds)        p99 ms   ops/s (rounds)',
  ];
  for (const leg of r.legs) {
    for (const [level, s] of Object.entries(leg.stats)) {
      const rounds = leg.rounds[level];
      out.push(
        `${leg.operation.padEnd(10)} ${leg.system.padEnd(25)} ${level.padEnd(6)} ` +
          `${`${s.p50} (${range(rounds.map((x) => x.p50))})`.padEnd(22)} ${String(s.p99).padEnd(8)} ` +
          `${s.throughputPerSec} (${range(rounds.map((x) => x.throughputPerSec))})`,
      );
    }
  }
  out.push(`eager starts: ${r.eagerStarts.eager} of ${r.eagerStarts.requested} asked for`);
  out.push('p50 over the peer\'s (operation, system: against DBOS / Restate, sequential and concurrent):');
  for (const [operation, systems] of Object.entries(r.ratios)) {
    for (const [system, peers] of Object.entries(systems)) {
      const cells = Object.entries(peers).map(
        ([peer, levels]) =>
          `${peer} ${Object.entries(levels)
            .map(([level, x]) => `${level} ×${x.toFixed(2)}`)
            .join(', ')}`,
      );
      out.push(`  ${operation.padEnd(8)} ${system.padEnd(25)} ${cells.join(' · ')}`);
    }
  }
  if (r.crashes.length) {
    out.push('SIGKILL after the provider committed, effects counted at the provider:');
    for (const c of r.crashes) {
      const outcomes = c.outcomes
        ? ` (${Object.entries(c.outcomes)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ')})`
        : '';
      out.push(
        `  ${c.target.padEnd(14)} ${c.system.padEnd(10)} ${c.iterations} crashes: ${c.effects} effects, ` +
          `${c.duplicates} duplicates${outcomes}`,
      );
    }
  }
  return out;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
