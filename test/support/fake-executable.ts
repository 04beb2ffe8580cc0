import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A shell script at `file` (folders made), executable, running `body`: a stand-in for a tool a resolver looks for. */
export async function fakeExecutable(file: string, body = ''): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}
