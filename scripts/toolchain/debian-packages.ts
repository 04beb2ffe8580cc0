import { runCommand } from '../../cli/toolchain/run-command';

/**
 * Debian's package tools, as the chromium provisioning uses them: a simulated install says which packages this
 * machine lacks, `apt-get download` fetches their .debs without installing anything, `dpkg-deb -x` unpacks one.
 * Only `aptUpdate` and `aptInstall` change the system, and they need root.
 */

/** True when this process may change the system's packages. */
export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

const C_LOCALE = { LC_ALL: 'C', LANG: 'C' };

/**
 * The packages (`name=version`) that `apt-get install --no-install-recommends <name>` would add or upgrade here,
 * read from a simulation, which needs no root. Throws when apt would not install `name` at all (no candidate:
 * stale or missing package lists).
 */
export async function plannedAptInstall(name: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await runCommand('apt-get', ['-s', '-q', 'install', '--no-install-recommends', name], {
    env: { ...env, ...C_LOCALE },
  });
  // "Inst libopus0 (1.3.1-3 Debian:12.13/stable [amd64])", or "Inst libudev1 [252.36-1] (252.39-1 …)" for an upgrade.
  const planned = [...stdout.matchAll(/^Inst (\S+) (?:\[[^\]]*\] )?\((\S+)/gm)].map((m) => `${m[1]}=${m[2]}`);
  if (!planned.some((p) => p.startsWith(`${name}=`))) {
    throw new Error(`apt-get would not install ${name} (already installed, or no candidate: run apt-get update?)`);
  }
  return planned;
}

/** Fetches the .deb files of `packages` (`name=version`) into `dir`; installs nothing. */
export async function downloadDebs(packages: readonly string[], dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  // As root, apt drops to the _apt user for downloads, which cannot write to a folder root made.
  const sandbox = runningAsRoot() ? ['-o', 'APT::Sandbox::User=root'] : [];
  await runCommand('apt-get', ['-q', ...sandbox, 'download', ...packages], { env: { ...env, ...C_LOCALE }, cwd: dir });
}

/** Unpacks the files of one .deb under `root` (as `dpkg-deb -x`: no maintainer scripts run, nothing is registered). */
export async function unpackDeb(deb: string, root: string, env: NodeJS.ProcessEnv): Promise<void> {
  await runCommand('dpkg-deb', ['-x', deb, root], { env });
}

/** Refreshes the package lists (root only). */
export async function aptUpdate(env: NodeJS.ProcessEnv): Promise<void> {
  await runCommand('apt-get', ['-q', 'update'], { env: { ...env, ...C_LOCALE } });
}

/** Installs one package and what it depends on (root only). */
export async function aptInstall(name: string, env: NodeJS.ProcessEnv): Promise<void> {
  await runCommand('apt-get', ['-q', 'install', '-y', '--no-install-recommends', name], {
    env: { ...env, ...C_LOCALE, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
