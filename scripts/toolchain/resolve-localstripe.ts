/**
 * localstripe (`pypi.org/project/localstripe`), a fake of Stripe's API in Python, for the Stripe example tool.
 * Resolved like the project's other servers:
 *
 *   RETRYSAFE_LOCALSTRIPE (a Python interpreter that can `import localstripe`) ─▶ the cached install in
 *     .tools/localstripe-<version>/ ─▶ `pip install --target` from PyPI into that folder.
 *
 * The install is a folder of packages that python3 (PYTHON when set, as for the Temporal wheels) runs with it on
 * PYTHONPATH, not a venv: a venv's scripts name the folder it was made in, so it cannot be built beside its place
 * and renamed into it, and Debian puts `venv` in a package of its own (python3-venv). pip's --target also passes
 * Debian's externally-managed guard (tried with its /usr/bin/python3). aiohttp and its companions carry compiled
 * parts built for one Python, so the folder's marker records the interpreter it was installed for (implementation,
 * major.minor, OS, CPU): another python3 later installs afresh.
 * The install took 9.4 s here with nothing cached, 6.5 s with the downloads in pip's cache (Python 3.11.7).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

import { executableProblem } from '../../cli/toolchain/executables';
import { buildIntoFolder } from './go-build';
import { runCommand } from '../../cli/toolchain/run-command';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

export const LOCALSTRIPE_VERSION = '1.15.10';
export const LOCALSTRIPE_ENV = 'RETRYSAFE_LOCALSTRIPE';

export interface ResolvedLocalstripe {
  /** The interpreter to run localstripe with. */
  python: string;
  /** The folder to put first on PYTHONPATH; absent when the interpreter imports localstripe by itself (env). */
  sitePackages?: string;
  source: 'env' | 'project-local' | 'installed';
  version?: string;
}

/** Puts localstripe and its dependencies into `into` (a fresh folder), for `python`; throws saying why it could not. */
export type LocalstripeInstaller = (
  into: string,
  python: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
) => Promise<void>;

export interface ResolveLocalstripeOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Install from PyPI when nothing is found; default true. */
  install?: boolean;
  log?: (line: string) => void;
  /** Seam for tests: the install (default `pip install --target`, checked by importing what it installed). */
  installer?: LocalstripeInstaller;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** What the cached folder was installed for; written last, inside the staging folder, before it is renamed. */
const Marker = z.object({ localstripe: z.string(), python: z.string() });
const MARKER_FILE = 'installed.json';

// One line naming the interpreter's build as far as compiled wheels care, e.g. `cpython-3.11-linux-x86_64`.
const PYTHON_TAG_PY =
  'import platform, sys; v = sys.version_info; ' +
  "print(f'{sys.implementation.name}-{v[0]}.{v[1]}-{sys.platform}-{platform.machine()}')";
// What the launcher (scripts/lib/localstripe-launcher.py) imports.
const IMPORT_PY = 'import aiohttp.web, localstripe.resources, localstripe.server';

export function localstripeFolder(projectRoot: string, version = LOCALSTRIPE_VERSION): string {
  return path.join(projectRoot, '.tools', `localstripe-${version}`);
}

export async function resolveLocalstripe(opts: ResolveLocalstripeOptions = {}): Promise<ResolvedLocalstripe> {
  const env = opts.env ?? process.env;
  const root = opts.projectRoot ?? DEFAULT_PROJECT_ROOT;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];

  const fromEnv = env[LOCALSTRIPE_ENV];
  if (fromEnv) {
    const problem = await executableProblem(fromEnv);
    if (problem) throw new ToolchainError(`${LOCALSTRIPE_ENV}=${fromEnv} ${problem}`);
    try {
      await runCommand(fromEnv, ['-c', IMPORT_PY], { env });
    } catch (err) {
      throw new ToolchainError(`${LOCALSTRIPE_ENV}=${fromEnv} cannot import localstripe: ${lastLine(err)}`);
    }
    return { python: fromEnv, source: 'env' };
  }
  attempts.push(`${LOCALSTRIPE_ENV}: not set`);

  const python = env.PYTHON || 'python3';
  let tag: string;
  try {
    tag = (await runCommand(python, ['-c', PYTHON_TAG_PY], { env })).stdout.trim();
  } catch (err) {
    attempts.push(`${python}: ${lastLine(err)}`);
    throw new ToolchainError(
      `no localstripe found (tried: ${attempts.join('; ')}); it runs on python3 (with pip, to install it): ` +
        'install python3, then `npm run setup:toolchain`',
      attempts,
    );
  }

  const folder = localstripeFolder(root);
  const sitePackages = path.join(folder, 'site-packages');
  const cachedProblem = await markerProblem(folder, tag);
  if (!cachedProblem) return { python, sitePackages, source: 'project-local', version: LOCALSTRIPE_VERSION };
  attempts.push(`${folder}: ${cachedProblem}`);

  if (opts.install === false) {
    throw new ToolchainError(
      `no localstripe found (tried: ${attempts.join('; ')}); install it with \`npm run setup:toolchain\``,
      attempts,
    );
  }
  log(`installing localstripe ${LOCALSTRIPE_VERSION} from PyPI for ${tag} (about ten seconds)…`);
  const started = Date.now();
  try {
    await buildIntoFolder(folder, async (staging) => {
      await (opts.installer ?? pipInstall)(path.join(staging, 'site-packages'), python, env, log);
      await writeFile(
        path.join(staging, MARKER_FILE),
        `${JSON.stringify({ localstripe: LOCALSTRIPE_VERSION, python: tag })}\n`,
      );
    });
  } catch (err) {
    throw new ToolchainError(`installing localstripe failed: ${(err as Error).message}`, attempts);
  }
  log(`installed localstripe ${LOCALSTRIPE_VERSION} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { python, sitePackages, source: 'installed', version: LOCALSTRIPE_VERSION };
}

/** The environment that runs `resolved`'s interpreter with the install on PYTHONPATH. */
export function localstripeEnv(resolved: ResolvedLocalstripe, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (!resolved.sitePackages) return { ...env };
  const pythonPath = [resolved.sitePackages, env.PYTHONPATH].filter((p) => p !== undefined && p !== '');
  return { ...env, PYTHONPATH: pythonPath.join(path.delimiter) };
}

/** Why the cached folder cannot be taken, or undefined when it holds this version, installed for `tag`. */
async function markerProblem(folder: string, tag: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(folder, MARKER_FILE), 'utf8');
  } catch {
    return 'not installed';
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const marker = Marker.safeParse(parsed);
  if (!marker.success) return `${MARKER_FILE} is not a marker of this project`;
  if (marker.data.localstripe !== LOCALSTRIPE_VERSION) return `holds localstripe ${marker.data.localstripe}`;
  if (marker.data.python !== tag) return `installed for ${marker.data.python}, this python3 is ${tag}`;
  return undefined;
}

const pipInstall: LocalstripeInstaller = async (into, python, env, log) => {
  log(`  ${python} -m pip install --target ${into} localstripe==${LOCALSTRIPE_VERSION}`);
  await runCommand(
    python,
    [
      ...['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet'],
      ...['--target', into, `localstripe==${LOCALSTRIPE_VERSION}`],
    ],
    { env },
  );
  // A wheel built for another interpreter installs without complaint and fails on import: check before it is taken.
  await runCommand(python, ['-s', '-c', IMPORT_PY], { env: { ...env, PYTHONPATH: into } });
};

/** The last line Python wrote (the exception, for a failed import), without runCommand's `<command> failed (…): `. */
function lastLine(err: unknown): string {
  const line = (err as Error).message.trim().split('\n').at(-1) ?? String(err);
  return line.replace(/^.* failed \((?:exit \d+|SIG[A-Z]+)\): /, '');
}
