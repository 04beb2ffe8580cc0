import { readdir } from 'node:fs/promises';
import path from 'node:path';

import { runCommand } from '../../cli/toolchain/run-command';

/**
 * The shared libraries `binary` needs that the dynamic loader cannot find, with `libraryDirs` searched first (as
 * LD_LIBRARY_PATH), according to ldd. Empty when everything resolves.
 */
export async function missingSharedLibraries(
  binary: string,
  libraryDirs: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const libraryPath = [...libraryDirs, env.LD_LIBRARY_PATH].filter((d) => d !== undefined && d !== '').join(':');
  const { stdout } = await runCommand('ldd', [binary], { env: { ...env, LD_LIBRARY_PATH: libraryPath } });
  return [...stdout.matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]);
}

/** Every folder under `root` that directly holds a shared library (`lib*.so`, `lib*.so.N`), relative to `root`, sorted. */
export async function sharedLibraryDirs(root: string, exclude: readonly string[] = []): Promise<string[]> {
  const found: string[] = [];
  async function walk(relative: string): Promise<void> {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true });
    if (entries.some((e) => (e.isFile() || e.isSymbolicLink()) && /^lib.*\.so(\.\d+)*$/.test(e.name)))
      found.push(relative);
    for (const e of entries) {
      const child = path.join(relative, e.name);
      if (e.isDirectory() && !exclude.includes(child)) await walk(child);
    }
  }
  await walk('');
  return found.filter((d) => d !== '' && !exclude.includes(d)).sort();
}
