/**
 * `npm run checks`: the static checks (eslint, tsc, the documentation's links, TypeDoc's validation, the API
 * reports), run side by side, one per core. Each is one single-threaded process, so on 2 cores two lanes finish in
 * the time of the longest lane instead of the sum (63 s instead of 99 s on 2026-12-07's machine, dist/ built).
 *
 * A check's output is printed whole when it ends, so lanes never interleave lines; a failure names the check and the
 * `npm run` command that repeats it alone. The exit code is 1 when any check failed; every check runs to its end
 * either way, so one run shows every failure.
 *
 * `--lanes N` overrides the lanes (default: the cores, at most the number of checks).
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** One static check: the `npm run` script that runs it alone. */
export interface Check {
  script: string;
  /** The command it runs here; `npm run <script>` unless a test gives another. */
  command?: readonly string[];
}

/**
 * The checks, longest first (2026-12-07, 2 cores, each alone: eslint 31 s; the API reports 9 s, or 22-33 s where they
 * first build dist/, as in a fresh clone; tsc 19; TypeDoc 10; links 2).
 */
export const CHECKS: readonly Check[] = [
  { script: 'lint' },
  { script: 'api:check' },
  { script: 'typecheck' },
  { script: 'docs:api' },
  { script: 'docs:links' },
];

/** How one check ended. */
export interface CheckResult {
  script: string;
  exitCode: number;
  ms: number;
  output: string;
}

function run(check: Check): Promise<CheckResult> {
  const [file, ...args] = check.command ?? ['npm', 'run', '--silent', check.script];
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(file!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = (exitCode: number, extra = ''): void =>
      resolve({
        script: check.script,
        exitCode,
        ms: performance.now() - started,
        output: Buffer.concat(chunks).toString('utf8') + extra,
      });
    child.on('error', (err) => done(127, `could not start ${file}: ${err.message}\n`));
    child.on('close', (code, signal) => done(code ?? 1, signal ? `killed by ${signal}\n` : ''));
  });
}

/**
 * Runs the checks, at most `lanes` at once, in the order given (a lane that frees takes the next one). `report` is
 * called as each ends, in the order they end.
 */
export async function runChecks(
  checks: readonly Check[],
  lanes: number,
  report: (result: CheckResult) => void,
): Promise<CheckResult[]> {
  if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`lanes must be a whole number of at least 1: ${lanes}`);
  const queue = [...checks];
  const results: CheckResult[] = [];
  const lane = async (): Promise<void> => {
    for (let check = queue.shift(); check; check = queue.shift()) {
      const result = await run(check);
      results.push(result);
      report(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, checks.length) }, lane));
  return results;
}

/** The line printed for a check when it ends, with its whole output first if it failed. */
export function describeResult(result: CheckResult): string {
  const seconds = (result.ms / 1000).toFixed(1);
  if (result.exitCode === 0) return `ok      ${result.script} (${seconds} s)\n`;
  const output = result.output.endsWith('\n') || result.output === '' ? result.output : `${result.output}\n`;
  return `${output}FAILED  ${result.script} (exit ${result.exitCode}, ${seconds} s): repeat it with npm run ${result.script}\n`;
}

function parseLanes(argv: readonly string[]): number {
  const at = argv.indexOf('--lanes');
  if (at === -1) return Math.min(availableParallelism(), CHECKS.length);
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--lanes takes a whole number of at least 1, got ${JSON.stringify(argv[at + 1] ?? '')}`);
  return value;
}

async function main(): Promise<void> {
  const lanes = parseLanes(process.argv.slice(2));
  const started = performance.now();
  process.stdout.write(`static checks: ${CHECKS.map((c) => c.script).join(', ')} (${lanes} at once)\n`);
  const results = await runChecks(CHECKS, lanes, (result) => process.stdout.write(describeResult(result)));
  const failed = results.filter((result) => result.exitCode !== 0).map((result) => result.script);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (failed.length) {
    process.stdout.write(`static checks FAILED in ${seconds} s: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  } else process.stdout.write(`static checks passed in ${seconds} s\n`);
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  });
