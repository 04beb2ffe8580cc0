/**
 * `npm run build`: the package as a team installs it. tsc compiles the engine, its entry points (api/) and the
 * retrysafe command (cli/) to dist/ with declarations; the approval page's static files and the hand-written
 * CommonJS loader (cli/dynamic-import.cjs, whose `import()` tsc would turn into `require()`) are copied beside their
 * code; the command is made executable. `npm pack` runs this first (prepack).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { BUILD_LOCK, BUILD_LOCK_HELD_ENV, BUILD_LOCK_OPTIONS } from './lib/built-package';
import { withFileLock } from './lib/file-lock';

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

function build(): void {
  const started = Date.now();
  rmSync(DIST, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')],
    { stdio: 'inherit' },
  );
  cpSync(path.join(ROOT, 'cli/approvals/page/static'), path.join(DIST, 'cli/approvals/page/static'), {
    recursive: true,
  });
  // `retrysafe init` copies its template as it is: TypeScript a team compiles, not code of the package.
  cpSync(path.join(ROOT, 'cli/init/template'), path.join(DIST, 'cli/init/template'), { recursive: true });
  copyFileSync(path.join(ROOT, 'cli/dynamic-import.cjs'), path.join(DIST, 'cli/dynamic-import.cjs'));
  chmodSync(path.join(DIST, 'cli/main.js'), 0o755);
  process.stderr.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

// One build of dist/ at a time (npm pack in the consumer test beside the package tests' ensureBuilt): the build
// that ensureBuilt runs holds its lock already; any other takes it.
if (process.env[BUILD_LOCK_HELD_ENV]) build();
else withFileLock(BUILD_LOCK, build, BUILD_LOCK_OPTIONS);
