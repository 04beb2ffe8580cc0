/**
 * The real Temporal server (`go.temporal.io/server/cmd/server`) and its SQL schema tool
 * (`go.temporal.io/server/cmd/tools/sql`), for a multi-service cluster on PostgreSQL. Resolved in the CLI's order:
 *
 *   RETRYSAFE_TEMPORAL_SERVER / RETRYSAFE_TEMPORAL_SQL_TOOL (both, or neither)
 *     ─▶ temporal-server and temporal-sql-tool on PATH
 *     ─▶ the cached build in .tools/temporal-server-<version>/
 *     ─▶ a build from the Go module proxy into that folder (`go install`, CGO off, `disable_grpc_modules`),
 *        with Go's module and build caches kept in .tools/go/ so a rebuild is quick and nothing lands in $HOME.
 *
 * v1.32.1 is the newest that builds on Go 1.26 (v1.32.2 needs Go 1.27). A cold build here took 4 min 42 s and
 * left 3.4 GB of caches; it prints Go's progress while it runs.
 */
import path from 'node:path';

import { executableProblem, findOnPath } from '../../cli/toolchain/executables';
import { type GoToolResolveOptions, buildIntoFolder, runGo } from './go-build';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

export const TEMPORAL_SERVER_VERSION = '1.32.1';
const MODULE = 'go.temporal.io/server';

export interface ResolvedTemporalServer {
  server: string;
  sqlTool: string;
  source: 'env' | 'path' | 'project-local' | 'built';
  /** Known for the project's own builds; not probed for env and PATH executables. */
  version?: string;
}

export type ResolveTemporalServerOptions = GoToolResolveOptions;

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Where the project keeps its own build: `.tools/temporal-server-<version>/{server,sql}`. */
export function temporalServerFolder(projectRoot: string, version = TEMPORAL_SERVER_VERSION): string {
  return path.join(projectRoot, '.tools', `temporal-server-${version}`);
}

export async function resolveTemporalServer(opts: ResolveTemporalServerOptions = {}): Promise<ResolvedTemporalServer> {
  const env = opts.env ?? process.env;
  const root = opts.projectRoot ?? DEFAULT_PROJECT_ROOT;
  const log = opts.log ?? (() => undefined);
  const lookup = opts.lookupOnPath ?? findOnPath;
  const attempts: string[] = [];

  // An override that points nowhere is an error, not a reason to fall back: the user asked for that file.
  const fromEnv = [env.RETRYSAFE_TEMPORAL_SERVER, env.RETRYSAFE_TEMPORAL_SQL_TOOL];
  if (fromEnv.some((v) => v)) {
    const [server, sqlTool] = fromEnv;
    if (!server || !sqlTool) {
      throw new ToolchainError(
        'set both RETRYSAFE_TEMPORAL_SERVER and RETRYSAFE_TEMPORAL_SQL_TOOL (the server and its schema tool come as a pair)',
      );
    }
    for (const [name, file] of [
      ['RETRYSAFE_TEMPORAL_SERVER', server],
      ['RETRYSAFE_TEMPORAL_SQL_TOOL', sqlTool],
    ] as const) {
      const problem = await executableProblem(file);
      if (problem) throw new ToolchainError(`${name}=${file} ${problem}`);
    }
    return { server, sqlTool, source: 'env' };
  }
  attempts.push('RETRYSAFE_TEMPORAL_SERVER: not set');

  const [onPathServer, onPathSql] = await Promise.all([
    lookup('temporal-server', env),
    lookup('temporal-sql-tool', env),
  ]);
  if (onPathServer && onPathSql) return { server: onPathServer, sqlTool: onPathSql, source: 'path' };
  attempts.push(`PATH: ${onPathServer ? 'temporal-sql-tool' : 'temporal-server'} not found`);

  const folder = temporalServerFolder(root);
  const cached = { server: path.join(folder, 'server'), sqlTool: path.join(folder, 'sql') };
  const cachedProblem =
    (await executableProblem(cached.server)) ?? (await executableProblem(cached.sqlTool)) ?? undefined;
  if (!cachedProblem) return { ...cached, source: 'project-local', version: TEMPORAL_SERVER_VERSION };
  attempts.push(`${folder}: ${cachedProblem}`);

  if (opts.build === false) {
    throw new ToolchainError(
      `no Temporal server found (tried: ${attempts.join('; ')}); build it with \`npm run setup:toolchain -- --cluster\``,
      attempts,
    );
  }
  log(`building Temporal server ${TEMPORAL_SERVER_VERSION} from the Go module proxy (a few minutes the first time)…`);
  const started = Date.now();
  try {
    await buildIntoFolder(folder, (staging) =>
      (opts.builder ?? goInstall)(staging, path.join(root, '.tools', 'go'), env, log),
    );
  } catch (err) {
    throw new ToolchainError(`building the Temporal server failed: ${(err as Error).message}`, attempts);
  }
  for (const file of [cached.server, cached.sqlTool]) {
    const problem = await executableProblem(file);
    if (problem) throw new ToolchainError(`the build finished but ${file} ${problem}`, attempts);
  }
  log(`built Temporal server ${TEMPORAL_SERVER_VERSION} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { ...cached, source: 'built', version: TEMPORAL_SERVER_VERSION };
}

/** `go install` of the server and the SQL tool into `into`, with Go's caches under `caches`; Go's lines go to `log`. */
async function goInstall(
  into: string,
  caches: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const args = [
    'install',
    '-tags',
    'disable_grpc_modules',
    `${MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
    `${MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
  ];
  await runGo(args, { caches, env: { ...env, GOBIN: into }, log });
}
