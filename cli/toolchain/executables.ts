import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

import { executableFileName } from './tool-specs';

/** Why `file` cannot be run, or undefined when it is an executable regular file. */
export async function executableProblem(file: string): Promise<string | undefined> {
  let info;
  try {
    info = await stat(file);
  } catch {
    return 'does not exist';
  }
  if (!info.isFile()) return 'is not a regular file';
  try {
    await access(file, constants.X_OK);
  } catch {
    return 'is not executable (chmod +x?)';
  }
  return undefined;
}

/** Why `dir` cannot serve as the folder of `names`, or undefined when it holds each of them as an executable. */
export async function executablesProblem(dir: string, names: readonly string[]): Promise<string | undefined> {
  for (const name of names) {
    const problem = await executableProblem(path.join(dir, name));
    if (problem !== undefined) return `has no usable ${name} (${name} ${problem})`;
  }
  return undefined;
}

/** Looks an executable up on `env.PATH` the way a shell would: first executable match wins. */
export async function findOnPath(binary: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((dir) => dir !== '');
  for (const dir of dirs) {
    const candidate = path.resolve(dir, executableFileName(binary));
    if ((await executableProblem(candidate)) === undefined) return candidate;
  }
  return undefined;
}
