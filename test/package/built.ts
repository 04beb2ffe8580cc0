import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

/** The folders whose sources dist/ is built from (tsconfig.build.json's include). */
const BUILT_FROM: readonly string[] = (
  JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] }
).include;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(file));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/**
 * The package as `npm run build` leaves it: dist/ is built again when any source it is built from is newer, so these
 * tests never read a stale build. Answers the package's exports map.
 */
export function builtPackage(): { exports: Record<string, { types: string; default: string } | string> } {
  const marker = path.join(ROOT, 'dist/api/index.js');
  const newest = Math.max(...BUILT_FROM.map((dir) => newestSource(path.join(ROOT, dir))));
  if (!existsSync(marker) || statSync(marker).mtimeMs < newest) {
    execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts')], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as ReturnType<typeof builtPackage>;
}

/** The built entry points, by subpath (`retrysafe`, `retrysafe/worker`, …), each with its JavaScript file. */
export function builtEntryPoints(): Array<{ name: string; file: string }> {
  return Object.entries(builtPackage().exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => ({
      name: subpath === '.' ? 'retrysafe' : `retrysafe/${subpath.slice(2)}`,
      file: path.join(ROOT, typeof target === 'string' ? target : target.default),
    }));
}
