/**
 * Mailpit (`github.com/axllent/mailpit`), an SMTP server with an HTTP API, for the SMTP mail example tool. Resolved
 * like the project's other servers:
 *
 *   RETRYSAFE_MAILPIT (a path to the binary) ─▶ `mailpit` on PATH ─▶ the cached build in .tools/mailpit-<version>/
 *     ─▶ `go install` from the Go module proxy into that folder (CGO off, Go's caches in .tools/go/).
 *
 * v1.33.1 builds on Go 1.26; the build took 37 s here with the Temporal server's modules already cached.
 */
import path from 'node:path';

import { executableProblem, findOnPath } from '../../cli/toolchain/executables';
import { type GoToolResolveOptions, buildIntoFolder, runGo } from './go-build';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

export const MAILPIT_VERSION = '1.33.1';
export const MAILPIT_ENV = 'RETRYSAFE_MAILPIT';
const MODULE = 'github.com/axllent/mailpit';

export interface ResolvedMailpit {
  path: string;
  source: 'env' | 'path' | 'project-local' | 'built';
  version?: string;
}

export type ResolveMailpitOptions = GoToolResolveOptions;

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export function mailpitFolder(projectRoot: string, version = MAILPIT_VERSION): string {
  return path.join(projectRoot, '.tools', `mailpit-${version}`);
}

export async function resolveMailpit(opts: ResolveMailpitOptions = {}): Promise<ResolvedMailpit> {
  const env = opts.env ?? process.env;
  const root = opts.projectRoot ?? DEFAULT_PROJECT_ROOT;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];

  const fromEnv = env[MAILPIT_ENV];
  if (fromEnv) {
    const problem = await executableProblem(fromEnv);
    if (problem) throw new ToolchainError(`${MAILPIT_ENV}=${fromEnv} ${problem}`);
    return { path: fromEnv, source: 'env' };
  }
  attempts.push(`${MAILPIT_ENV}: not set`);

  const onPath = await (opts.lookupOnPath ?? findOnPath)('mailpit', env);
  if (onPath) return { path: onPath, source: 'path' };
  attempts.push('PATH: mailpit not found');

  const folder = mailpitFolder(root);
  const cached = path.join(folder, 'mailpit');
  const cachedProblem = await executableProblem(cached);
  if (!cachedProblem) return { path: cached, source: 'project-local', version: MAILPIT_VERSION };
  attempts.push(`${cached}: ${cachedProblem}`);

  if (opts.build === false) {
    throw new ToolchainError(
      `no Mailpit found (tried: ${attempts.join('; ')}); build it with \`npm run setup:toolchain\``,
      attempts,
    );
  }
  log(`building Mailpit ${MAILPIT_VERSION} from the Go module proxy (under a minute the first time)…`);
  const started = Date.now();
  try {
    await buildIntoFolder(folder, (staging) =>
      (opts.builder ?? goInstall)(staging, path.join(root, '.tools', 'go'), env, log),
    );
  } catch (err) {
    throw new ToolchainError(`building Mailpit failed: ${(err as Error).message}`, attempts);
  }
  const problem = await executableProblem(cached);
  if (problem) throw new ToolchainError(`the build finished but ${cached} ${problem}`, attempts);
  log(`built Mailpit ${MAILPIT_VERSION} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { path: cached, source: 'built', version: MAILPIT_VERSION };
}

async function goInstall(into: string, caches: string, env: NodeJS.ProcessEnv, log: (line: string) => void) {
  await runGo(['install', `${MODULE}@v${MAILPIT_VERSION}`], { caches, env: { ...env, GOBIN: into }, log });
}
