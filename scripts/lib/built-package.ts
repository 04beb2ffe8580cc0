/**
 * The package as `npm run build` leaves it in dist/, built again when any source it is built from is newer, so what
 * reads the build (the API reports, the tests of the built entry points) never reads a stale one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

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

/** Builds dist/ unless it is newer than every source of tsconfig.build.json's folders and package.json. */
export function ensureBuilt(): void {
  const marker = path.join(ROOT, 'dist/api/index.js');
  const { include } = readJson<{ include: string[] }>('tsconfig.build.json');
  const newest = Math.max(
    statSync(path.join(ROOT, 'package.json')).mtimeMs,
    ...include.map((dir) => newestSource(path.join(ROOT, dir))),
  );
  if (existsSync(marker) && statSync(marker).mtimeMs >= newest) return;
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
