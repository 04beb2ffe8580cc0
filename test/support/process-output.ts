import type { ChildProcess } from 'node:child_process';

/** The first line of `proc`'s stdout that matches; rejects with what it printed if it exits or times out first. */
export function lineFrom(proc: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(`no line matching ${pattern} in ${timeoutMs} ms`), timeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${why}\nstdout:\n${out.slice(-4000)}\nstderr:\n${err.slice(-4000)}`));
    };
    proc.stderr?.on('data', (chunk: Buffer) => void (err += chunk.toString()));
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => pattern.test(l));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    proc.once('exit', (code, signal) => fail(`exited (${code ?? signal}) first`));
  });
}
