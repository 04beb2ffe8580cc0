/**
 * The package as `npm run build` leaves it in dist/, built again when any source it is built from is newer, so what
 * reads the build (the API reports, the tests of the built entry points) never reads a stale one. Processes that
 * ask at once (test files run concurrently) take turns on one lock: one builds, the others wait and find it built,
 * and none reads a dist/ another is still writing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { withFileLock, type FileLockOptions } from './file-lock';

export const ROOT = path.resolve(__dirname, '..', '..');

/** The lock every build of dist/ holds (outside dist/, which the build removes first). */
export const BUILD_LOCK = path.join(ROOT, '.out', 'dist-build.lock');
/** Set for a build that ensureBuilt runs under the lock it holds already. */
export const BUILD_LOCK_HELD_ENV = 'RETRYSAFE_DIST_BUILD_LOCK_HELD';
/** A build takes seconds to a minute on a busy machine: wait up to ten; a lock older than twenty is stale. */
export const BUILD_LOCK_OPTIONS: FileLockOptions = { timeoutMs: 10 * 60_000, staleMs: 20 * 60_000 };

interface ExportsMap {
  exports: Record<string, { types: string; default: string } | string>;
}

/** One entry point of the package: its name as imported, its built JavaScript and declarations. */
export interface BuiltEntryPoint {
  name: string;
  file: string;
  types: string;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as T;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(file));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is newer than every source of tsconfig.build.json's folders, package.json and the build's own files. */
function isBuilt(): boolean {
  const marker = path.join(ROOT, 'dist/api/index.js');
  const { include } = readJson<{ include: string[] }>('tsconfig.build.json');
  const newest = Math.max(
    ...['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.ts'].map(
      (file) => statSync(path.join(ROOT, file)).mtimeMs,
    ),
    ...include.map((dir) => newestSource(path.join(ROOT, dir))),
  );
  return existsSync(marker) && statSync(marker).mtimeMs >= newest;
}

/** Builds dist/ unless it is up to date; waits while another process builds it, and builds at most once. */
export function ensureBuilt(): void {
  withFileLock(
    BUILD_LOCK,
    () => {
      if (isBuilt()) return;
      execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts')], {
        cwd: ROOT,
        env: { ...process.env, [BUILD_LOCK_HELD_ENV]: '1' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    },
    BUILD_LOCK_OPTIONS,
  );
}

/** The built entry points of the exports map (`retrysafe`, `retrysafe/worker`, …), after ensureBuilt. */
export function builtEntryPoints(): BuiltEntryPoint[] {
  ensureBuilt();
  return Object.entries(readJson<ExportsMap>('package.json').exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      if (typeof target === 'string') throw new Error(`${subpath}: an entry point names its types and its code`);
      return {
        name: subpath === '.' ? 'retrysafe' : `retrysafe/${subpath.slice(2)}`,
        file: path.join(ROOT, target.default),
        types: path.join(ROOT, target.types),
      };
    });
}
