/**
 * A Docker Compose client of the Go generation (v2 and later: the one that reads the Compose Specification), for
 * checking docker-compose.yml with `config`, which needs no Docker engine. Resolved like the other tools:
 *
 *   RETRYSAFE_DOCKER_COMPOSE (an executable; it must report v2 or later)
 *     ─▶ `docker compose` (the CLI plugin), then `docker-compose` on PATH, each only when it reports v2 or later
 *        (Debian's docker-compose 1.29 is the Python v1: it refuses the file's top-level `name:`)
 *     ─▶ the cached build in .tools/docker-compose-<version>/docker-compose
 *     ─▶ a build from the Go module proxy into that folder (`go install …/cmd@v<version>`, CGO off), with Go's
 *        caches in .tools/go/ beside the Temporal server's.
 *
 * Compose v5.6.0 is the newest that builds on Go 1.26.8 (v5.7.0 needs Go 1.26.10); the v2 module line ended at
 * v2.40.3, and v5 is the same client (`docker compose`), renumbered. Its go.mod has `exclude` directives, which
 * `go install …@version` refuses, so it is built as the main module (go-build.ts). Here a build with empty Go
 * caches took 82 s (about 360 MB of modules, 430 MB of build cache), 74 s beside the Temporal server's caches, 3 s
 * with warm caches; resolving the cached build takes about 40 ms (most of it asking `docker compose` for a version).
 */
import path from 'node:path';

import { executableProblem, findOnPath } from '../../cli/toolchain/executables';
import { type GoToolResolveOptions, buildIntoFolder, goBuildModule } from './go-build';
import { runCommand } from '../../cli/toolchain/run-command';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

export const DOCKER_COMPOSE_VERSION = '5.6.0';
export const COMPOSE_ENV_VAR = 'RETRYSAFE_DOCKER_COMPOSE';
const MODULE = 'github.com/docker/compose/v5';

export type ComposeSource = 'env' | 'docker-plugin' | 'path' | 'project-local' | 'built';

export interface ResolvedCompose {
  name: 'docker-compose';
  /** What to run, before the compose arguments: `[docker, 'compose']` for the plugin, else `[file]`. */
  command: string[];
  /** As the client reports it (`version --short`), or the project's build version. */
  version: string;
  source: ComposeSource;
}

export interface ResolveComposeOptions extends GoToolResolveOptions {
  /** Seam for tests: the version probe. */
  probeVersion?: (command: readonly string[], env: NodeJS.ProcessEnv) => Promise<string | undefined>;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');
const BINARY = 'docker-compose';

/** Why a v1 client does not count, for messages: what of the file it cannot read. */
export const V1_CLIENT_REASON =
  "Compose v1 predates the Compose Specification: it refuses docker-compose.yml's top-level `name:` and does not " +
  'know the other fields of the v2 format';

/** Where the project keeps its own build: `.tools/docker-compose-<version>/docker-compose`. */
export function composeFolder(projectRoot: string, version = DOCKER_COMPOSE_VERSION): string {
  return path.join(projectRoot, '.tools', `docker-compose-${version}`);
}

/** The `x.y.z` in a client's version output (`2.40.3`, `v5.6.0`, `docker-compose version 1.29.2, build …`). */
export function parseComposeVersion(output: string): string | undefined {
  return /(?:^|[\sv])(\d+\.\d+\.\d+)/.exec(output.trim())?.[1];
}

export function composeMajor(version: string): number {
  return Number(version.split('.')[0]);
}

/** The version `command` reports, or undefined when it does not run or reports none (a plugin-less docker CLI). */
export async function probeComposeVersion(
  command: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  for (const args of [['version', '--short'], ['version']]) {
    try {
      const { stdout } = await runCommand(command[0], [...command.slice(1), ...args], { env });
      const version = parseComposeVersion(stdout);
      if (version !== undefined) return version;
    } catch {
      // Not a compose client, or one that does not know --short: try the next form, then give up.
    }
  }
  return undefined;
}

export async function resolveCompose(opts: ResolveComposeOptions = {}): Promise<ResolvedCompose> {
  const env = opts.env ?? process.env;
  const root = opts.projectRoot ?? DEFAULT_PROJECT_ROOT;
  const log = opts.log ?? (() => undefined);
  const lookup = opts.lookupOnPath ?? findOnPath;
  const probe = opts.probeVersion ?? probeComposeVersion;
  const attempts: string[] = [];
  const found = (command: string[], version: string, source: ComposeSource): ResolvedCompose => ({
    name: 'docker-compose',
    command,
    version,
    source,
  });

  // An override that points nowhere, or at a v1 client, is an error, not a reason to fall back.
  const fromEnv = env[COMPOSE_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    const file = path.resolve(fromEnv);
    const problem = await executableProblem(file);
    if (problem !== undefined) throw new ToolchainError(`${COMPOSE_ENV_VAR}=${fromEnv} ${problem}`);
    const version = await probe([file], env);
    if (version === undefined) {
      throw new ToolchainError(`${COMPOSE_ENV_VAR}=${fromEnv} does not answer \`version\` like a Compose client`);
    }
    if (composeMajor(version) < 2) {
      throw new ToolchainError(`${COMPOSE_ENV_VAR}=${fromEnv} is Compose ${version}; ${V1_CLIENT_REASON}`);
    }
    return found([file], version, 'env');
  }
  attempts.push(`$${COMPOSE_ENV_VAR}: not set`);

  const docker = await lookup('docker', env);
  const candidates: Array<{ label: string; command: string[]; source: ComposeSource }> = [];
  if (docker)
    candidates.push({ label: `\`docker compose\` (${docker})`, command: [docker, 'compose'], source: 'docker-plugin' });
  else attempts.push('docker: not on PATH');
  const standalone = await lookup(BINARY, env);
  if (standalone)
    candidates.push({ label: `${BINARY} on PATH (${standalone})`, command: [standalone], source: 'path' });
  else attempts.push(`${BINARY}: not on PATH`);
  for (const candidate of candidates) {
    const version = await probe(candidate.command, env);
    if (version === undefined) attempts.push(`${candidate.label}: reports no Compose version (no compose plugin?)`);
    else if (composeMajor(version) < 2) attempts.push(`${candidate.label} is ${version}, skipped: ${V1_CLIENT_REASON}`);
    else return found(candidate.command, version, candidate.source);
  }

  const folder = composeFolder(root);
  const cached = path.join(folder, BINARY);
  const cachedProblem = await executableProblem(cached);
  if (cachedProblem === undefined) return found([cached], DOCKER_COMPOSE_VERSION, 'project-local');
  attempts.push(`${cached}: ${cachedProblem}`);

  if (opts.build === false) {
    throw new ToolchainError(
      `no Compose v2+ client found (tried: ${attempts.join('; ')}); build one with \`npm run setup:toolchain -- --compose\``,
      attempts,
    );
  }
  log(`building Docker Compose ${DOCKER_COMPOSE_VERSION} from the Go module proxy (a few minutes the first time)…`);
  const started = Date.now();
  try {
    await buildIntoFolder(folder, async (staging) => {
      await (opts.builder ?? buildCompose)(staging, path.join(root, '.tools', 'go'), env, log);
      const stagedProblem = await executableProblem(path.join(staging, BINARY));
      if (stagedProblem !== undefined) throw new Error(`the build left no ${BINARY}: it ${stagedProblem}`);
      const reported = await probe([path.join(staging, BINARY)], env);
      if (reported !== DOCKER_COMPOSE_VERSION) {
        throw new Error(`the built ${BINARY} reports version ${reported ?? '(none)'}, not ${DOCKER_COMPOSE_VERSION}`);
      }
    });
  } catch (err) {
    throw new ToolchainError(`building Docker Compose failed: ${(err as Error).message}`, attempts);
  }
  log(`built Docker Compose ${DOCKER_COMPOSE_VERSION} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return found([cached], DOCKER_COMPOSE_VERSION, 'built');
}

/**
 * Compose's command built with Compose as the main module (`go install …/cmd@v…` refuses its go.mod, which has
 * `exclude` directives), into `into/docker-compose`, stamped with its version as Compose's Makefile does (without
 * it the client reports version "dev").
 */
async function buildCompose(
  into: string,
  caches: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const tag = `v${DOCKER_COMPOSE_VERSION}`;
  await goBuildModule({
    module: MODULE,
    version: tag,
    mainPackage: './cmd',
    output: path.join(into, BINARY),
    workDir: into,
    caches,
    env,
    log,
    ldflags: `-s -w -X ${MODULE}/internal.Version=${tag}`,
  });
}
