import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { aptUpdate, downloadDebs, plannedAptInstall, runningAsRoot, unpackDeb } from './debian-packages';
import { runCommand } from '../../cli/toolchain/run-command';
import { missingSharedLibraries, sharedLibraryDirs } from './shared-libraries';

/**
 * Debian's chromium without installing it: `apt-get download` fetches the chromium .debs and those of the libraries
 * this machine lacks (what a simulated `apt-get install --no-install-recommends chromium` would add), `dpkg-deb -x`
 * unpacks them into one folder under `.tools/`, and a wrapper script puts the unpacked libraries on
 * LD_LIBRARY_PATH before it execs the browser. Nothing needs root, nothing outside the folder changes, and the
 * folder appears complete or not at all.
 */

export const CHROMIUM_DEBIAN_PACKAGE = 'chromium';
/** The browser binary inside the unpacked tree (Debian's /usr/bin/chromium is a shell script that execs it). */
export const UNPACKED_BINARY = path.join('root', 'usr', 'lib', 'chromium', 'chromium');
export const WRAPPER_FILE = 'chromium';
export const MANIFEST_FILE = 'manifest.json';

/** What an unpacked install records about itself (manifest.json beside the wrapper). */
export interface UnpackedChromium {
  /** The Debian version of the chromium package, e.g. 156.0.8078.114-1~deb12u1. */
  version: string;
  /** Relative to the install folder. */
  binary: string;
  /** Relative to the install folder; the wrapper puts them on LD_LIBRARY_PATH. */
  libraryDirs: string[];
  packages: string[];
}

export interface UnpackRequest {
  /** The install folder; its `chromium` wrapper is the executable. */
  destination: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
}

/** Puts a runnable chromium wrapper at `<destination>/chromium`, or throws saying why it could not. */
export type ChromiumUnpacker = (request: UnpackRequest) => Promise<void>;

export const unpackChromiumFromDebs: ChromiumUnpacker = async ({ destination, env, log }) => {
  const toolsDir = path.dirname(destination);
  await mkdir(toolsDir, { recursive: true });
  const work = await mkdtemp(path.join(toolsDir, '.install-chromium-'));
  try {
    const packages = await packagesToFetch(env, log);
    const debDir = path.join(work, 'debs');
    await mkdir(debDir);
    log(`downloading Debian's chromium and ${packages.length - 1} packages of libraries into ${destination}`);
    await downloadDebs(packages, debDir, env);
    const debs = (await readdir(debDir)).filter((f) => f.endsWith('.deb'));
    if (debs.length !== packages.length) {
      throw new Error(`apt-get download left ${debs.length} .deb files for ${packages.length} packages`);
    }
    for (const deb of debs) await unpackDeb(path.join(debDir, deb), path.join(work, 'root'), env);
    await rm(debDir, { recursive: true, force: true });

    const binaryDir = path.dirname(UNPACKED_BINARY);
    const manifest: UnpackedChromium = {
      version: packages.find((p) => p.startsWith(`${CHROMIUM_DEBIAN_PACKAGE}=`))!.split('=')[1],
      binary: UNPACKED_BINARY,
      libraryDirs: (await sharedLibraryDirs(work, [binaryDir])).filter((d) => d !== binaryDir),
      packages,
    };
    await stat(path.join(work, UNPACKED_BINARY)).catch(() => {
      throw new Error(`the chromium package holds no ${UNPACKED_BINARY.replace(/^root/, '')}`);
    });
    const missing = await missingSharedLibraries(
      path.join(work, UNPACKED_BINARY),
      manifest.libraryDirs.map((d) => path.join(work, d)),
      env,
    );
    if (missing.length) {
      throw new Error(`chromium still lacks ${missing.join(', ')} after unpacking ${packages.length} packages`);
    }
    await writeFile(path.join(work, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const wrapper = path.join(work, WRAPPER_FILE);
    await writeFile(wrapper, wrapperScript(manifest));
    await chmod(wrapper, 0o755);
    await chmod(work, 0o755); // mkdtemp made it private; the tools beside it are not
    const { stdout } = await runCommand(wrapper, ['--version'], { env });
    if (!/^Chromium \d/.test(stdout.trim())) throw new Error(`the unpacked chromium answered --version with ${stdout}`);
    await moveIntoPlace(work, destination);
    log(`unpacked ${stdout.trim()} (${packages.length} packages) into ${destination}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
};

/** The manifest of an unpacked install, or undefined when there is none (or it cannot be read). */
export async function readUnpackedChromium(folder: string): Promise<UnpackedChromium | undefined> {
  try {
    return JSON.parse(await readFile(path.join(folder, MANIFEST_FILE), 'utf8')) as UnpackedChromium;
  } catch {
    return undefined;
  }
}

async function packagesToFetch(env: NodeJS.ProcessEnv, log: (msg: string) => void): Promise<string[]> {
  try {
    return await plannedAptInstall(CHROMIUM_DEBIAN_PACKAGE, env);
  } catch (err) {
    // A fresh machine may never have fetched its package lists; root can, once.
    if (!runningAsRoot()) throw err;
    log(`apt-get has no chromium to offer (${(err as Error).message}); running apt-get update`);
    await aptUpdate(env);
    return plannedAptInstall(CHROMIUM_DEBIAN_PACKAGE, env);
  }
}

/** Relative to the script's own folder, so the project can be moved or cloned elsewhere with `.tools/` in it. */
function wrapperScript(manifest: UnpackedChromium): string {
  const libraryPath = manifest.libraryDirs.map((d) => `$here/${d}`).join(':');
  return [
    '#!/bin/sh',
    `# Debian's chromium ${manifest.version}, unpacked by scripts/toolchain/unpack-chromium-debs.ts (not installed).`,
    'here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)',
    `LD_LIBRARY_PATH="${libraryPath}\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"`,
    'export LD_LIBRARY_PATH',
    `exec "$here/${manifest.binary}" "$@"`,
    '',
  ].join('\n');
}

/** Replaces `destination` with `work`; when another installer got there in between, its copy is kept. */
async function moveIntoPlace(work: string, destination: string): Promise<void> {
  await rm(destination, { recursive: true, force: true });
  try {
    await rename(work, destination);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await readUnpackedChromium(destination))) return;
    throw err;
  }
}
