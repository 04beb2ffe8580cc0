import { readFile } from 'node:fs/promises';

/** Resident memory of a process in MiB, from /proc (Linux); undefined where there is none. */
export async function rssMiB(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Samples a process's resident memory every `everyMs` until stopped; resolves to the highest sample. */
export function sampleRss(pid: number, everyMs = 250): { stop(): Promise<number | undefined> } {
  let peak: number | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const now = await rssMiB(pid);
      if (now !== undefined) peak = Math.max(peak ?? 0, now);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
