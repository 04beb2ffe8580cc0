import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { downloadDebs, unpackDeb } from './debian-packages';
import { executablesProblem, findOnPath } from '../../cli/toolchain/executables';
import { runCommand } from '../../cli/toolchain/run-command';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';

/**
 * Prometheus and promtool, for the test that loads the shipped alert rules into a real Prometheus scraping a
 * worker. Resolved like the other servers: $RETRYSAFE_PROMETHEUS_BIN (a folder holding both), then both on PATH,
 * then the project's unpacked copy in `.tools/prometheus-debian/`, and last an install there: Debian's `prometheus`
 * package fetched with `apt-get download` and unpacked with `dpkg-deb -x`, with the script packages its web pages
 * load (for the screenshots in docs/). Its two binaries are static Go programs and need nothing else; nothing needs
 * root and nothing on the system changes.
 */

export const PROMETHEUS_ENV_VAR = 'RETRYSAFE_PROMETHEUS_BIN';
export const PROMETHEUS_EXECUTABLES = ['prometheus', 'promtool'] as const;
/** The Debian package; bookworm has 2.42. */
export const PROMETHEUS_DEBIAN_PACKAGE = 'prometheus';
/**
 * What its web pages load (Debian links them from /usr/share/javascript): unpacked beside it, so that the graph and
 * alert pages work when Prometheus is started with `--web.local-assets` (prometheusWebAssets). The binaries need none.
 */
export const PROMETHEUS_UI_PACKAGES = [
  'fonts-glyphicons-halflings',
  'libjs-bootstrap',
  'libjs-bootstrap4',
  'libjs-d3',
  'libjs-eonasdan-bootstrap-datetimepicker',
  'libjs-jquery',
  'libjs-jquery-hotkeys',
  'libjs-moment',
  'libjs-moment-timezone',
  'libjs-mustache',
  'libjs-popper.js',
  'libjs-rickshaw',
] as const;
const MANIFEST_FILE = 'manifest.json';

export interface ResolvedPrometheus {
  name: 'prometheus';
  prometheus: string;
  promtool: string;
  source: 'env' | 'path' | 'project-local';
  /** The Debian package version, for the project-local copy. */
  version?: string;
  /** For `--web.local-assets`: the web pages' folder of the project-local copy, whose scripts are unpacked too. */
  webAssets?: string;
}

export interface ResolvePrometheusOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder holding `.tools/`; defaults to this repository's root. */
  projectRoot?: string;
  /** Install when nothing is found; default true. */
  install?: boolean;
  /** Skip PATH (as on a machine without Prometheus). */
  skipSystem?: boolean;
  log?: (msg: string) => void;
}

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Where the project keeps its unpacked Prometheus (git-ignored, like the other tools). */
export function prometheusLocalDir(projectRoot: string): string {
  return path.join(projectRoot, '.tools', 'prometheus-debian');
}

export async function resolvePrometheus(opts: ResolvePrometheusOptions = {}): Promise<ResolvedPrometheus> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const attempts: string[] = [];
  const inFolder = (
    dir: string,
    source: ResolvedPrometheus['source'],
    local?: UnpackedPrometheus,
  ): ResolvedPrometheus => ({
    name: 'prometheus',
    prometheus: path.join(dir, 'prometheus'),
    promtool: path.join(dir, 'promtool'),
    source,
    ...(local ? { version: local.version, webAssets: path.join(folder, local.webAssets) } : {}),
  });
  const folder = prometheusLocalDir(opts.projectRoot ?? DEFAULT_PROJECT_ROOT);

  const fromEnv = env[PROMETHEUS_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    const dir = path.resolve(fromEnv);
    const problem = await folderProblem(dir);
    if (problem !== undefined) {
      throw new ToolchainError(
        `$${PROMETHEUS_ENV_VAR} is set to ${fromEnv}, which ${problem}. Point it at the folder holding prometheus ` +
          'and promtool, or unset it.',
        [`$${PROMETHEUS_ENV_VAR}: ${dir} ${problem}`],
      );
    }
    return inFolder(dir, 'env');
  }
  attempts.push(`$${PROMETHEUS_ENV_VAR}: not set`);

  if (opts.skipSystem) {
    attempts.push('PATH: skipped (skipSystem)');
  } else {
    const [prometheus, promtool] = await Promise.all(PROMETHEUS_EXECUTABLES.map((n) => findOnPath(n, env)));
    if (prometheus && promtool) return { name: 'prometheus', prometheus, promtool, source: 'path' };
    attempts.push(`PATH: ${prometheus ? 'no promtool' : 'no prometheus'}`);
  }

  const local = await readManifest(folder);
  const localProblem = local ? await folderProblem(path.join(folder, local.binDir)) : 'does not exist';
  if (local && localProblem === undefined) return inFolder(path.join(folder, local.binDir), 'project-local', local);
  attempts.push(`project-local: ${folder} ${localProblem}`);

  if (opts.install === false) {
    attempts.push('install: skipped (install: false)');
  } else {
    try {
      const started = Date.now();
      const installed = await unpackPrometheusFromDeb(folder, env, log);
      log(`prometheus ${installed.version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return inFolder(path.join(folder, installed.binDir), 'project-local', installed);
    } catch (err) {
      attempts.push(`unpack Debian's prometheus into .tools/: ${(err as Error).message}`);
    }
  }

  throw new ToolchainError(
    [
      'Could not find Prometheus (prometheus, promtool) for the alert-rule tests. Tried, in order:',
      ...attempts.map((attempt, i) => `  ${i + 1}. ${attempt}`),
      `Set ${PROMETHEUS_ENV_VAR} to the folder holding prometheus and promtool, or install them ` +
        '(Debian: apt-get install prometheus; or the release tarball from prometheus.io).',
    ].join('\n'),
    attempts,
  );
}

/** Why `dir` cannot serve, or undefined when it holds every executable. */
function folderProblem(dir: string): Promise<string | undefined> {
  return executablesProblem(dir, PROMETHEUS_EXECUTABLES);
}

interface UnpackedPrometheus {
  /** The Debian version, e.g. 2.42.0+ds-5+deb12u1. */
  version: string;
  package: string;
  /** Relative to the install folder. */
  binDir: string;
  /** Relative to the install folder: the web pages, their scripts unpacked beside them. */
  webAssets: string;
  packages: string[];
}

async function readManifest(folder: string): Promise<UnpackedPrometheus | undefined> {
  try {
    const m = JSON.parse(await readFile(path.join(folder, MANIFEST_FILE), 'utf8')) as Partial<UnpackedPrometheus>;
    return typeof m.version === 'string' &&
      typeof m.binDir === 'string' &&
      typeof m.package === 'string' &&
      typeof m.webAssets === 'string'
      ? (m as UnpackedPrometheus)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `apt-get download` of prometheus and its pages' scripts, `dpkg-deb -x` of each into a fresh folder beside
 * `destination`, a run of `promtool --version` to see that it works here, then the manifest and a rename: the folder
 * appears complete or not at all.
 */
async function unpackPrometheusFromDeb(
  destination: string,
  env: NodeJS.ProcessEnv,
  log: (msg: string) => void,
): Promise<UnpackedPrometheus> {
  const toolsDir = path.dirname(destination);
  await mkdir(toolsDir, { recursive: true });
  const work = await mkdtemp(path.join(toolsDir, '.install-prometheus-'));
  try {
    const debDir = path.join(work, 'debs');
    await mkdir(debDir);
    const packages = [PROMETHEUS_DEBIAN_PACKAGE, ...PROMETHEUS_UI_PACKAGES];
    log(
      `downloading Debian's ${PROMETHEUS_DEBIAN_PACKAGE} and the ${PROMETHEUS_UI_PACKAGES.length} script packages ` +
        `of its web pages into ${destination}`,
    );
    await downloadDebs(packages, debDir, env);
    const debs = (await readdir(debDir)).filter((f) => f.endsWith('.deb'));
    const deb = debs.find((f) => f.startsWith(`${PROMETHEUS_DEBIAN_PACKAGE}_`));
    if (!deb || debs.length !== packages.length) {
      throw new Error(`apt-get download left ${debs.length} .deb files for ${packages.length} packages`);
    }
    // prometheus_2.42.0+ds-5+deb12u1_amd64.deb; the epoch, if any, is %3a-escaped.
    const version = decodeURIComponent(deb.split('_')[1] ?? 'unknown');
    const root = path.join(work, 'root');
    for (const file of debs) await unpackDeb(path.join(debDir, file), root, env);
    const manifest: UnpackedPrometheus = {
      version,
      package: PROMETHEUS_DEBIAN_PACKAGE,
      binDir: 'usr/bin',
      webAssets: 'usr/share/prometheus/web',
      packages: debs.map((f) => f.split('_').slice(0, 2).map(decodeURIComponent).join('=')),
    };
    const problem = await folderProblem(path.join(root, manifest.binDir));
    if (problem !== undefined) throw new Error(`the package unpacked, but its usr/bin ${problem}`);
    await runCommand(path.join(root, manifest.binDir, 'promtool'), ['--version'], { env });
    await writeFile(path.join(root, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await rm(destination, { recursive: true, force: true });
    await rename(root, destination);
    return manifest;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
