import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

import { executableProblem, findOnPath } from '../../cli/toolchain/executables';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

/**
 * Building a Go command from the Go module proxy as the project builds its Go tools: Go's module and build caches
 * in `caches`/{mod,build} (so a rebuild is quick and nothing lands in $HOME), CGO off. Go says little while it
 * compiles, so `log` hears every 50th module download, every other line Go writes to stderr, and every 30 s that
 * the build is still at work.
 */
export interface GoRunOptions {
  caches: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  cwd?: string;
}

/** Runs `go <args>` and resolves with its stdout; rejects with the last lines Go wrote when it exits non-zero. */
export function runGo(args: readonly string[], options: GoRunOptions): Promise<string> {
  const { caches, env, log } = options;
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd: options.cwd,
      env: {
        ...env,
        GOMODCACHE: path.join(caches, 'mod'),
        GOCACHE: path.join(caches, 'build'),
        CGO_ENABLED: '0',
        GOFLAGS: '-mod=mod',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let tail = '';
    let downloads = 0;
    const started = Date.now();
    const ticker = setInterval(
      () => log(`  go: still at work (${Math.round((Date.now() - started) / 1000)} s)…`),
      30_000,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      stdout = (stdout + chunk.toString()).slice(-1024 * 1024);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) {
        if (line.startsWith('go: downloading')) {
          if (++downloads % 50 === 0) log(`  go: ${downloads} modules downloaded…`);
        } else if (line.trim()) log(`  ${line}`);
      }
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearInterval(ticker);
      reject(new Error(err.code === 'ENOENT' ? 'go is not installed or not on PATH' : err.message));
    });
    child.on('close', (code, signal) => {
      clearInterval(ticker);
      if (code === 0) return resolve(stdout);
      const lastLines = tail.trim().split('\n').slice(-5).join('\n');
      reject(new Error(`go ${args[0]} exited ${signal ?? code}: ${lastLines}`));
    });
  });
}

export interface GoModuleBuild extends GoRunOptions {
  /** The module and its version, e.g. `github.com/docker/compose/v5` and `v5.6.0`. */
  module: string;
  version: string;
  /** The main package inside the module, relative to its root, e.g. `./cmd`. */
  mainPackage: string;
  /** Where the executable goes. */
  output: string;
  /** Scratch space for a writable copy of the module's source; removed afterwards. */
  workDir: string;
  ldflags?: string;
}

/**
 * `go build` of a module's command with the module as the main module, as its own Makefile builds it. Needed when
 * the module's go.mod has `exclude` or `replace` directives, which `go install pkg@version` refuses. The source
 * comes from the module proxy (`go mod download`, checked against the checksum database) and is copied out of
 * the read-only module cache first, since the build may have to write go.sum.
 */
export async function goBuildModule(request: GoModuleBuild): Promise<void> {
  const { module, version, workDir } = request;
  const download = z
    .object({ Dir: z.string().min(1) })
    .parse(JSON.parse(await runGo(['mod', 'download', '-json', `${module}@${version}`], request)));
  const source = path.join(workDir, 'src');
  await rm(source, { recursive: true, force: true });
  await cp(download.Dir, source, { recursive: true });
  await makeWritable(source);
  try {
    await runGo(
      [
        'build',
        '-trimpath',
        ...(request.ldflags ? ['-ldflags', request.ldflags] : []),
        '-o',
        request.output,
        request.mainPackage,
      ],
      { ...request, cwd: source },
    );
  } finally {
    await rm(source, { recursive: true, force: true });
  }
}

/** The module cache's files are read-only (and so are its copies): give the owner write access throughout. */
async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(file);
    else if (entry.isFile()) await chmod(file, (await stat(file)).mode | 0o200);
  }
}

/**
 * Builds into a staging folder beside `folder` and renames it into place once `build` (which may also check what it
 * built) has succeeded: an interrupted or failed build leaves no half-filled cache, and no staging folder either.
 */
export async function buildIntoFolder(folder: string, build: (staging: string) => Promise<void>): Promise<void> {
  const staging = `${folder}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await build(staging);
    await rm(folder, { recursive: true, force: true });
    await rename(staging, folder);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

/** How a tool the project builds with Go is resolved: where to look, whether to build, and seams for tests. */
export interface GoToolResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Build from the Go module proxy when nothing is found; default true. */
  build?: boolean;
  log?: (line: string) => void;
  /** Seams for tests: the PATH lookup and the build (which must leave the executables in `into`). */
  lookupOnPath?: (binary: string, env: NodeJS.ProcessEnv) => Promise<string | undefined>;
  builder?: (into: string, caches: string, env: NodeJS.ProcessEnv, log: (line: string) => void) => Promise<void>;
}

/** One command the project builds from the Go module proxy with `go install`, and how it is looked for first. */
export interface GoToolSpec {
  /** The name people read, e.g. `Mailpit`. */
  title: string;
  /** The executable's name on PATH and in its cache folder, e.g. `mailpit`. */
  binary: string;
  version: string;
  /** The variable naming the executable's path, e.g. `RETRYSAFE_MAILPIT`. */
  envVar: string;
  /** The package `go install` builds, without its version, e.g. `github.com/axllent/mailpit`. */
  installPackage: string;
  /** What `go install` names the executable when it differs from `binary` (the last element of the package). */
  installedAs?: string;
  /** The build's line in the log, e.g. `under a minute the first time`. */
  buildTime: string;
}

export interface ResolvedGoTool {
  path: string;
  source: 'env' | 'path' | 'project-local' | 'built';
  version?: string;
}

/** The cache folder of a tool: `.tools/<binary>-<version>/`. */
export function goToolFolder(projectRoot: string, spec: Pick<GoToolSpec, 'binary' | 'version'>): string {
  return path.join(projectRoot, '.tools', `${spec.binary}-${spec.version}`);
}

/**
 * Resolves a Go-built tool: its variable ─▶ PATH ─▶ the cached build in `.tools/<binary>-<version>/` ─▶ `go install`
 * from the module proxy into that folder (CGO off, Go's caches in `.tools/go/`), idempotent and cached.
 */
export async function resolveGoTool(
  spec: GoToolSpec,
  opts: GoToolResolveOptions,
  root: string,
): Promise<ResolvedGoTool> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];

  const fromEnv = env[spec.envVar];
  if (fromEnv) {
    const problem = await executableProblem(fromEnv);
    if (problem) throw new ToolchainError(`${spec.envVar}=${fromEnv} ${problem}`);
    return { path: fromEnv, source: 'env' };
  }
  attempts.push(`${spec.envVar}: not set`);

  const onPath = await (opts.lookupOnPath ?? findOnPath)(spec.binary, env);
  if (onPath) return { path: onPath, source: 'path' };
  attempts.push(`PATH: ${spec.binary} not found`);

  const folder = goToolFolder(root, spec);
  const cached = path.join(folder, spec.binary);
  const cachedProblem = await executableProblem(cached);
  if (!cachedProblem) return { path: cached, source: 'project-local', version: spec.version };
  attempts.push(`${cached}: ${cachedProblem}`);

  if (opts.build === false) {
    throw new ToolchainError(
      `no ${spec.title} found (tried: ${attempts.join('; ')}); build it with \`npm run setup:toolchain\``,
      attempts,
    );
  }
  log(`building ${spec.title} ${spec.version} from the Go module proxy (${spec.buildTime})…`);
  const started = Date.now();
  const install = async (into: string, caches: string, goEnv: NodeJS.ProcessEnv, goLog: (line: string) => void) => {
    await runGo(['install', `${spec.installPackage}@v${spec.version}`], {
      caches,
      env: { ...goEnv, GOBIN: into },
      log: goLog,
    });
    if (spec.installedAs) await rename(path.join(into, spec.installedAs), path.join(into, spec.binary));
  };
  try {
    await buildIntoFolder(folder, (staging) =>
      (opts.builder ?? install)(staging, path.join(root, '.tools', 'go'), env, log),
    );
  } catch (err) {
    throw new ToolchainError(`building ${spec.title} failed: ${(err as Error).message}`, attempts);
  }
  const problem = await executableProblem(cached);
  if (problem) throw new ToolchainError(`the build finished but ${cached} ${problem}`, attempts);
  log(`built ${spec.title} ${spec.version} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { path: cached, source: 'built', version: spec.version };
}
