// `npm test`: the static checks (`npm run checks`: eslint, tsc, the docs' links, TypeDoc, the API reports) run beside
// the toolchain's setup and the test runner instead of before them. The runner mostly waits on real servers, so on two
// cores the checks fit in its idle time; one after the other they added about 100 s to the suite.
// The checks' output is kept and printed whole when they end (at once if they fail), so it never splits the runner's
// lines; the command fails if either the checks or the tests did.
// Usage: tsx scripts/test-with-checks.ts <test file>…
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
}

function run(command: string, args: readonly string[], capture: boolean): { ended: Promise<Ended>; output(): string } {
  const started = performance.now();
  const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ended = new Promise<Ended>((resolve) => {
    child.once('error', (err) => {
      output += `${command}: ${err.message}\n`;
      resolve({ code: 127, signal: null, ms: performance.now() - started });
    });
    child.once('close', (code, signal) => resolve({ code, signal, ms: performance.now() - started }));
  });
  return { ended, output: () => output };
}

const failed = (e: Ended) => e.code !== 0;
const seconds = (e: Ended) => `${(e.ms / 1000).toFixed(0)} s`;
const how = (e: Ended) => (e.signal ? `signal ${e.signal}` : `exit ${e.code}`);

async function main(): Promise<number> {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: tsx scripts/test-with-checks.ts <test file>…');
    return 2;
  }
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const checks = run(npm, ['run', '--silent', 'checks'], true);
  let checksReported = false;
  const reportChecks = (e: Ended) => {
    if (checksReported) return;
    checksReported = true;
    if (failed(e)) {
      process.stderr.write(
        `\n${checks.output()}\nstatic checks (npm run checks) FAILED (${how(e)}) after ${seconds(e)}\n`,
      );
    } else {
      console.log(
        `static checks (npm run checks: lint, typecheck, docs:links, docs:api, api:check) passed in ${seconds(e)}`,
      );
    }
  };
  void checks.ended.then(reportChecks);

  const tsx = [process.execPath, ['--import', 'tsx']] as const;
  const setup = await run(tsx[0], [...tsx[1], 'scripts/setup-toolchain.ts', '--quiet'], false).ended;
  let tests: Ended | undefined;
  if (!failed(setup)) {
    tests = await run(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
      false,
    ).ended;
  }
  const checked = await checks.ended;
  reportChecks(checked);
  if (failed(setup)) console.error(`the toolchain's setup failed (${how(setup)}); no test ran`);
  else if (tests && failed(tests)) console.error(`the tests failed (${how(tests)}) after ${seconds(tests)}`);
  return failed(checked) || failed(setup) || !tests || failed(tests) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
