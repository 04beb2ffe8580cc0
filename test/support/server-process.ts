import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A test's own server in its own process (a TypeScript entry run with tsx), ready once it prints
 * `{"url": "http://…"}` on stdout. Its stderr goes to the test's.
 */
export async function startServerProcess(
  entry: string,
  args: string[] = [],
): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"url":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`${path.basename(entry)} exited ${code} before it listened`)));
  });
  return { url, proc };
}
