import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { aptUpdate, downloadDebs, plannedAptInstall, runningAsRoot, unpackDeb } from './debian-packages';
import { executablesProblem, findOnPath } from '../../cli/toolchain/executables';
import { runCommand } from '../../cli/toolchain/run-command';
import { missingSharedLibraries, sharedLibraryDirs } from './shared-libraries';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

/**
 * The PostgreSQL server binaries (`initdb`, `postgres`) the ledger's tests start a throw-away server with. Resolved
 * like the other tools: $RETRYSAFE_PG_BIN (a folder holding them), then `pg_config --bindir`, then Debian's
 * `/usr/lib/postgresql/<N>/bin` (highest N), then `postgres` and `initdb` on PATH, then the project's unpacked copy
 * in `.tools/postgresql-debian/`, and last an install there: Debian's packages fetched with `apt-get download` and
 * unpacked with `dpkg-deb -x`, without root and without touching the system.
 */

export const POSTGRES_ENV_VAR = 'RETRYSAFE_PG_BIN';
/** The executables a folder must hold to count. */
export const POSTGRES_EXECUTABLES = ['initdb', 'postgres'] as const;

export type PostgresSource = 'env' | 'pg_config' | 'debian-system' | 'path' | 'project-local';

export interface ResolvedPostgres {
  name: 'postgres';
  /** The folder holding initdb, postgres and pg_ctl. */
  path: string;
  source: PostgresSource;
  /** The Debian package version, for the project-local copy; not probed for the others. */
  version?: string;
  /** Folders to put first on LD_LIBRARY_PATH when running the binaries (the unpacked copy's libraries). */
  libraryDirs: string[];
}

export interface ResolvePostgresOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Install when nothing is found; default true. */
  install?: boolean;
  log?: (msg: string) => void;
  /** Where Debian keeps its server binaries, one folder per major version; default /usr/lib/postgresql. */
  debianRoot?: string;
  /** Seams for tests: skip the machine's own copies (as on a machine without PostgreSQL). */
  skipSystem?: boolean;
  unpacker?: PostgresUnpacker;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Where the project keeps its unpacked PostgreSQL (git-ignored, like the other tools). */
export function postgresLocalDir(projectRoot: string): string {
  return path.join(projectRoot, '.tools', 'postgresql-debian');
}

/** LD_LIBRARY_PATH for running `resolved`'s binaries, ahead of what `env` already has. */
export function postgresEnv(resolved: ResolvedPostgres, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (resolved.libraryDirs.length === 0) return { ...env };
  const libraryPath = [...resolved.libraryDirs, env.LD_LIBRARY_PATH].filter((d) => d !== undefined && d !== '');
  return { ...env, LD_LIBRARY_PATH: libraryPath.join(':') };
}

export async function resolvePostgres(opts: ResolvePostgresOptions = {}): Promise<ResolvedPostgres> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];
  const found = (dir: string, source: PostgresSource): ResolvedPostgres => ({
    name: 'postgres',
    path: dir,
    source,
    libraryDirs: [],
  });

  const fromEnv = env[POSTGRES_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    const dir = path.resolve(fromEnv);
    const problem = await folderProblem(dir);
    if (problem !== undefined) {
      throw new ToolchainError(
        `$${POSTGRES_ENV_VAR} is set to ${fromEnv}, which ${problem}. Point it at the folder holding initdb and ` +
          `postgres (e.g. /usr/lib/postgresql/15/bin), or unset it.`,
        [`$${POSTGRES_ENV_VAR}: ${dir} ${problem}`],
      );
    }
    return found(dir, 'env');
  }
  attempts.push(`$${POSTGRES_ENV_VAR}: not set`);

  if (opts.skipSystem) {
    attempts.push('the machine: skipped (skipSystem)');
  } else {
    const pgConfig = await findOnPath('pg_config', env);
    if (pgConfig === undefined) {
      attempts.push('pg_config: not on PATH');
    } else {
      try {
        const dir = (await runCommand(pgConfig, ['--bindir'], { env })).stdout.trim();
        const problem = await folderProblem(dir);
        if (problem === undefined) return found(dir, 'pg_config');
        attempts.push(`pg_config --bindir: ${dir} ${problem}`);
      } catch (err) {
        attempts.push(`pg_config --bindir: ${(err as Error).message}`);
      }
    }

    const debianRoot = opts.debianRoot ?? '/usr/lib/postgresql';
    const versions = await readdir(debianRoot).catch(() => [] as string[]);
    const byVersion = versions.filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a));
    let debianFound: string | undefined;
    for (const v of byVersion) {
      const dir = path.join(debianRoot, v, 'bin');
      if ((await folderProblem(dir)) === undefined) {
        debianFound = dir;
        break;
      }
    }
    if (debianFound !== undefined) return found(debianFound, 'debian-system');
    attempts.push(`${debianRoot}/<N>/bin: ${byVersion.length ? `none of ${byVersion.join(', ')} holds both` : 'none'}`);

    const onPath = await findOnPath('initdb', env);
    if (onPath !== undefined) {
      const dir = path.dirname(await realpath(onPath));
      const problem = await folderProblem(dir);
      if (problem === undefined) return found(dir, 'path');
      attempts.push(`PATH: initdb is ${onPath}, but its folder ${dir} ${problem}`);
    } else {
      attempts.push('PATH: no initdb');
    }
  }

  const folder = postgresLocalDir(opts.projectRoot ?? DEFAULT_PROJECT_ROOT);
  const localProblem = await unpackedProblem(folder, env);
  if (localProblem === undefined) return projectLocal(folder);
  attempts.push(`project-local: ${folder} ${localProblem}`);

  if (opts.install === false) {
    attempts.push('install: skipped (install: false)');
  } else {
    try {
      const started = Date.now();
      await (opts.unpacker ?? unpackPostgresFromDebs)({ destination: folder, env, log });
      const installedProblem = await unpackedProblem(folder, env);
      if (installedProblem !== undefined) throw new Error(`unpacked, but ${installedProblem}`);
      log(`postgresql ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return projectLocal(folder);
    } catch (err) {
      attempts.push(`unpack Debian's postgresql into .tools/: ${(err as Error).message}`);
    }
  }

  throw new ToolchainError(
    [
      'Could not find the PostgreSQL server binaries (initdb, postgres) for the ledger tests. Tried, in order:',
      ...attempts.map((attempt, i) => `  ${i + 1}. ${attempt}`),
      `Set ${POSTGRES_ENV_VAR} to the folder holding initdb and postgres, or install a PostgreSQL server ` +
        '(Debian: apt-get install postgresql; macOS: brew install postgresql).',
    ].join('\n'),
    attempts,
  );
}

/** Why `dir` cannot serve, or undefined when it holds every executable. */
function folderProblem(dir: string): Promise<string | undefined> {
  return executablesProblem(dir, POSTGRES_EXECUTABLES);
}

async function projectLocal(folder: string): Promise<ResolvedPostgres> {
  const manifest = await readUnpackedPostgres(folder);
  if (!manifest) throw new Error(`${folder} lost its ${MANIFEST_FILE}`);
  return {
    name: 'postgres',
    path: path.join(folder, manifest.binDir),
    source: 'project-local',
    version: manifest.version,
    libraryDirs: manifest.libraryDirs.map((d) => path.join(folder, d)),
  };
}

/** Why the unpacked copy cannot run: no manifest, no binaries, or libraries this machine no longer has. */
async function unpackedProblem(folder: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const manifest = await readUnpackedPostgres(folder);
  if (!manifest) {
    const exists = await readFile(path.join(folder, MANIFEST_FILE)).then(
      () => true,
      () => false,
    );
    return exists ? `has an unreadable ${MANIFEST_FILE}` : 'does not exist';
  }
  const binDir = path.join(folder, manifest.binDir);
  const problem = await folderProblem(binDir);
  if (problem !== undefined) return problem;
  try {
    for (const name of POSTGRES_EXECUTABLES) {
      const missing = await missingSharedLibraries(
        path.join(binDir, name),
        manifest.libraryDirs.map((d) => path.join(folder, d)),
        env,
      );
      if (missing.length) return `cannot run here: ${name} misses ${missing.join(', ')}`;
    }
  } catch (err) {
    return `cannot be checked with ldd: ${(err as Error).message}`;
  }
  return undefined;
}

// ── the unpacked install ──

/** The Debian server package to unpack when apt cannot say which one `postgresql` stands for. */
export const DEFAULT_DEBIAN_PACKAGE = 'postgresql-15';
export const MANIFEST_FILE = 'manifest.json';

/** What an unpacked install records about itself (manifest.json in the install folder). */
export interface UnpackedPostgres {
  /** The Debian version of the server package, e.g. 15.20-0+deb12u1. */
  version: string;
  /** The server package, e.g. postgresql-15. */
  package: string;
  /** Relative to the install folder. */
  binDir: string;
  /** Relative to the install folder; put on LD_LIBRARY_PATH to run the binaries. */
  libraryDirs: string[];
  packages: string[];
}

export interface UnpackPostgresRequest {
  /** The install folder; its manifest.json names the bin folder inside it. */
  destination: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
}

/** Puts a runnable PostgreSQL under `destination`, or throws saying why it could not. */
export type PostgresUnpacker = (request: UnpackPostgresRequest) => Promise<void>;

/**
 * Debian's PostgreSQL server without installing it: `apt-get download` fetches the server package and those this
 * machine lacks (what a simulated `apt-get install --no-install-recommends` would add), `dpkg-deb -x` unpacks them
 * into one folder, and the manifest names the bin folder and the unpacked library folders. The binaries find their
 * share/ and lib/ folders relative to themselves, so the tree runs where it lies. Nothing needs root, no
 * maintainer script runs, and the folder appears complete or not at all.
 */
export const unpackPostgresFromDebs: PostgresUnpacker = async ({ destination, env, log }) => {
  const toolsDir = path.dirname(destination);
  await mkdir(toolsDir, { recursive: true });
  const work = await mkdtemp(path.join(toolsDir, '.install-postgresql-'));
  try {
    const { serverPackage, packages } = await packagesToFetch(env, log);
    const debDir = path.join(work, 'debs');
    await mkdir(debDir);
    log(`downloading Debian's ${serverPackage} and ${packages.length - 1} packages it needs into ${destination}`);
    await downloadDebs(packages, debDir, env);
    const debs = (await readdir(debDir)).filter((f) => f.endsWith('.deb'));
    if (debs.length !== packages.length) {
      throw new Error(`apt-get download left ${debs.length} .deb files for ${packages.length} packages`);
    }
    for (const deb of debs) await unpackDeb(path.join(debDir, deb), path.join(work, 'root'), env);
    await rm(debDir, { recursive: true, force: true });

    const major = serverPackage.replace(/^postgresql-/, '');
    const binDir = path.join('root', 'usr', 'lib', 'postgresql', major, 'bin');
    const problem = await folderProblem(path.join(work, binDir));
    if (problem !== undefined)
      throw new Error(`the ${serverPackage} package's /usr/lib/postgresql/${major}/bin ${problem}`);
    const manifest: UnpackedPostgres = {
      version: packages.find((p) => p.startsWith(`${serverPackage}=`))!.split('=')[1],
      package: serverPackage,
      binDir,
      libraryDirs: await sharedLibraryDirs(work, [binDir]),
      packages,
    };
    for (const name of POSTGRES_EXECUTABLES) {
      const missing = await missingSharedLibraries(
        path.join(work, binDir, name),
        manifest.libraryDirs.map((d) => path.join(work, d)),
        env,
      );
      if (missing.length)
        throw new Error(`${name} still lacks ${missing.join(', ')} after unpacking ${packages.length} packages`);
    }
    await writeFile(path.join(work, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await chmod(work, 0o755); // mkdtemp made it private; the server may run as another user (root may not run it)
    const runEnv = {
      ...env,
      LD_LIBRARY_PATH: [...manifest.libraryDirs.map((d) => path.join(work, d)), env.LD_LIBRARY_PATH]
        .filter(Boolean)
        .join(':'),
    };
    const { stdout } = await runCommand(path.join(work, binDir, 'postgres'), ['--version'], { env: runEnv });
    if (!/^postgres \(PostgreSQL\) \d/.test(stdout.trim())) {
      throw new Error(`the unpacked postgres answered --version with ${stdout}`);
    }
    await moveIntoPlace(work, destination);
    log(`unpacked ${stdout.trim()} (${packages.length} packages) into ${destination}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
};

/** The manifest of an unpacked install, or undefined when there is none (or it cannot be read). */
export async function readUnpackedPostgres(folder: string): Promise<UnpackedPostgres | undefined> {
  try {
    return JSON.parse(await readFile(path.join(folder, MANIFEST_FILE), 'utf8')) as UnpackedPostgres;
  } catch {
    return undefined;
  }
}

/** The versioned server package Debian's `postgresql` stands for here (postgresql-15 on Debian 12, -17 on 13). */
async function debianServerPackage(env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await runCommand('apt-cache', ['depends', 'postgresql'], {
      env: { ...env, LC_ALL: 'C', LANG: 'C' },
    });
    return /^\s*Depends: (postgresql-\d+)\s*$/m.exec(stdout)?.[1] ?? DEFAULT_DEBIAN_PACKAGE;
  } catch {
    return DEFAULT_DEBIAN_PACKAGE;
  }
}

async function packagesToFetch(
  env: NodeJS.ProcessEnv,
  log: (msg: string) => void,
): Promise<{ serverPackage: string; packages: string[] }> {
  const plan = async () => {
    const serverPackage = await debianServerPackage(env);
    return { serverPackage, packages: await plannedAptInstall(serverPackage, env) };
  };
  try {
    return await plan();
  } catch (err) {
    // A fresh machine may never have fetched its package lists; root can, once.
    if (!runningAsRoot()) throw err;
    log(`apt-get has no postgresql server to offer (${(err as Error).message}); running apt-get update`);
    await aptUpdate(env);
    return plan();
  }
}

/** Replaces `destination` with `work`; when another installer got there in between, its copy is kept. */
async function moveIntoPlace(work: string, destination: string): Promise<void> {
  await rm(destination, { recursive: true, force: true });
  try {
    await rename(work, destination);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await readUnpackedPostgres(destination))) return;
    throw err;
  }
}
