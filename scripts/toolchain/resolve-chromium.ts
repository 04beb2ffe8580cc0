import path from 'node:path';

import { aptInstall, aptUpdate, runningAsRoot } from './debian-packages';
import { executableProblem, findOnPath } from '../../cli/toolchain/executables';
import { missingSharedLibraries } from './shared-libraries';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';
import type { ChromiumUnpacker } from './unpack-chromium-debs';
import {
  CHROMIUM_DEBIAN_PACKAGE,
  readUnpackedChromium,
  unpackChromiumFromDebs,
  WRAPPER_FILE,
} from './unpack-chromium-debs';

/**
 * The headless browser the approval page's tests drive (playwright-core launches it; Playwright's own browser
 * download does not work on machines that reach package registries only). Resolved like the Temporal tools:
 * $RETRYSAFE_CHROMIUM, then PATH, then the project's unpacked copy in `.tools/chromium-debian/`, then an install:
 * Debian's packages unpacked there without root, or, failing that and running as root, `apt-get install chromium`.
 */

export const CHROMIUM_ENV_VAR = 'RETRYSAFE_CHROMIUM';
/** Names a Chromium or Chrome executable goes by on PATH, in order of preference. */
export const CHROMIUM_EXECUTABLE_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

export type ChromiumSource = 'env' | 'path' | 'project-local' | 'system-package';

export interface ResolvedChromium {
  name: 'chromium';
  path: string;
  source: ChromiumSource;
  /** The Debian package version, for the project-local copy; not probed for the others. */
  version?: string;
}

export interface ResolveChromiumOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Install when nothing is found; default true. */
  install?: boolean;
  log?: (msg: string) => void;
  /** Seams for tests. */
  lookupOnPath?: (binary: string, env: NodeJS.ProcessEnv) => Promise<string | undefined>;
  unpacker?: ChromiumUnpacker;
  systemInstaller?: (env: NodeJS.ProcessEnv, log: (msg: string) => void) => Promise<void>;
  isRoot?: () => boolean;
  /** Why the unpacked copy in `folder` cannot run here, or undefined when it can. */
  checkUnpacked?: (folder: string, env: NodeJS.ProcessEnv) => Promise<string | undefined>;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Where the project keeps its unpacked chromium (git-ignored, like the Temporal executables). */
export function chromiumLocalDir(projectRoot: string): string {
  return path.join(projectRoot, '.tools', 'chromium-debian');
}

export async function resolveChromium(opts: ResolveChromiumOptions = {}): Promise<ResolvedChromium> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];

  const fromEnv = env[CHROMIUM_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    const file = path.resolve(fromEnv);
    const problem = await executableProblem(file);
    if (problem !== undefined) {
      throw new ToolchainError(
        `$${CHROMIUM_ENV_VAR} is set to ${fromEnv}, which ${problem}. Fix or unset ${CHROMIUM_ENV_VAR}.`,
        [`$${CHROMIUM_ENV_VAR}: ${file} ${problem}`],
      );
    }
    return { name: 'chromium', path: file, source: 'env' };
  }
  attempts.push(`$${CHROMIUM_ENV_VAR}: not set`);

  const lookupOnPath = opts.lookupOnPath ?? findOnPath;
  for (const name of CHROMIUM_EXECUTABLE_NAMES) {
    const onPath = await lookupOnPath(name, env);
    if (onPath !== undefined) return { name: 'chromium', path: onPath, source: 'path' };
  }
  attempts.push(`PATH: no executable named ${CHROMIUM_EXECUTABLE_NAMES.join(', ')}`);

  const folder = chromiumLocalDir(opts.projectRoot ?? DEFAULT_PROJECT_ROOT);
  const checkUnpacked = opts.checkUnpacked ?? unpackedProblem;
  const localProblem = await checkUnpacked(folder, env);
  if (localProblem === undefined) return projectLocal(folder);
  attempts.push(`project-local: ${path.join(folder, WRAPPER_FILE)} ${localProblem}`);

  if (opts.install === false) {
    attempts.push('install: skipped (install: false)');
  } else {
    try {
      const started = Date.now();
      await (opts.unpacker ?? unpackChromiumFromDebs)({ destination: folder, env, log });
      const installedProblem = await checkUnpacked(folder, env);
      if (installedProblem !== undefined) throw new Error(`unpacked, but ${installedProblem}`);
      log(`chromium ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return projectLocal(folder);
    } catch (err) {
      attempts.push(`unpack Debian's ${CHROMIUM_DEBIAN_PACKAGE} into .tools/: ${(err as Error).message}`);
    }
    if ((opts.isRoot ?? runningAsRoot)()) {
      try {
        log(`installing Debian's ${CHROMIUM_DEBIAN_PACKAGE} with apt-get (running as root)`);
        await (opts.systemInstaller ?? installSystemChromium)(env, log);
        const installed = await lookupOnPath(CHROMIUM_EXECUTABLE_NAMES[0], env);
        if (installed === undefined) throw new Error(`installed, but no ${CHROMIUM_EXECUTABLE_NAMES[0]} is on PATH`);
        return { name: 'chromium', path: installed, source: 'system-package' };
      } catch (err) {
        attempts.push(`apt-get install ${CHROMIUM_DEBIAN_PACKAGE}: ${(err as Error).message}`);
      }
    } else {
      attempts.push(
        `apt-get install ${CHROMIUM_DEBIAN_PACKAGE}: skipped, not running as root (sudo apt-get install ${CHROMIUM_DEBIAN_PACKAGE})`,
      );
    }
  }

  throw new ToolchainError(
    [
      'Could not find chromium (the headless browser of the approval page tests). Tried, in order:',
      ...attempts.map((attempt, i) => `  ${i + 1}. ${attempt}`),
      `Set ${CHROMIUM_ENV_VAR} to a Chromium or Chrome executable (on macOS: ` +
        '"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"), or install Debian\'s chromium package.',
    ].join('\n'),
    attempts,
  );
}

async function projectLocal(folder: string): Promise<ResolvedChromium> {
  const manifest = await readUnpackedChromium(folder);
  return {
    name: 'chromium',
    path: path.join(folder, WRAPPER_FILE),
    source: 'project-local',
    ...(manifest ? { version: manifest.version } : {}),
  };
}

/** Why the unpacked copy cannot run: no wrapper, no manifest, or libraries this machine no longer has. */
async function unpackedProblem(folder: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const wrapperProblem = await executableProblem(path.join(folder, WRAPPER_FILE));
  if (wrapperProblem !== undefined) return wrapperProblem;
  const manifest = await readUnpackedChromium(folder);
  if (!manifest) return 'has no readable manifest.json beside it';
  try {
    const missing = await missingSharedLibraries(
      path.join(folder, manifest.binary),
      manifest.libraryDirs.map((d) => path.join(folder, d)),
      env,
    );
    return missing.length ? `cannot run here: missing ${missing.join(', ')}` : undefined;
  } catch (err) {
    return `cannot be checked with ldd: ${(err as Error).message}`;
  }
}

async function installSystemChromium(env: NodeJS.ProcessEnv, log: (msg: string) => void): Promise<void> {
  try {
    await aptInstall(CHROMIUM_DEBIAN_PACKAGE, env);
  } catch (err) {
    log(`apt-get install failed (${(err as Error).message}); running apt-get update and trying again`);
    await aptUpdate(env);
    await aptInstall(CHROMIUM_DEBIAN_PACKAGE, env);
  }
}
