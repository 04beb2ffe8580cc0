import { readFile } from 'node:fs/promises';

/**
 * The CPU time processes use over a measurement, from Linux's /proc: on two cores a burst is CPU-bound, so the CPU
 * one operation takes in each process (the server, the worker, the client) says where its time goes with far less
 * spread than its latency.
 */

/** Clock ticks per second of /proc's utime and stime (USER_HZ): 100 on every Linux ABI Node.js runs on. */
const USER_HZ = 100;

/**
 * User plus system time of a whole process (all its threads), in ms, from the text of /proc/<pid>/stat; undefined
 * when the text is not one. The command name (field 2) is in parentheses and may hold spaces and parentheses itself,
 * so the fields are counted from the last `)`.
 */
export function statCpuMs(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  // After the name: field 3 (state) onwards; utime and stime are fields 14 and 15.
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) return undefined;
  return ((utime + stime) * 1000) / USER_HZ;
}

/** The CPU time a process has used so far, in ms; undefined where there is no /proc or the process is gone. */
export async function processCpuMs(pid: number): Promise<number | undefined> {
  try {
    return statCpuMs(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** CPU ms by process name, over one measurement. */
export type CpuByProcess = Record<string, number>;

/**
 * Starts counting the CPU of the named processes (a name may cover several, e.g. a pool's workers, summed); `stop()`
 * gives what each name used since, in ms. A name with a process that could not be read at either end is left out
 * rather than counted short.
 */
export async function countCpu(
  processes: Readonly<Record<string, number | undefined | readonly (number | undefined)[]>>,
): Promise<{ stop(): Promise<CpuByProcess> }> {
  const named = Object.entries(processes).map(([name, pids]) => [name, [pids].flat()] as const);
  const read = async () =>
    new Map(
      await Promise.all(
        named.map(async ([name, pids]) => {
          const each = await Promise.all(pids.map((pid) => (pid === undefined ? undefined : processCpuMs(pid))));
          const sum = each.some((ms) => ms === undefined) ? undefined : each.reduce((a: number, ms) => a + ms!, 0);
          return [name, sum] as const;
        }),
      ),
    );
  const before = await read();
  return {
    async stop() {
      const after = await read();
      const used: CpuByProcess = {};
      for (const [name, start] of before) {
        const end = after.get(name);
        if (start !== undefined && end !== undefined && end >= start) used[name] = end - start;
      }
      return used;
    },
  };
}

/** Each process's CPU divided by the operations it served, to 0.01 ms, and their sum as `total`. */
export function cpuPerOperation(used: CpuByProcess, operations: number): CpuByProcess {
  if (operations <= 0) return {};
  const per: CpuByProcess = {};
  let total = 0;
  for (const [name, ms] of Object.entries(used)) {
    per[name] = Math.round((ms / operations) * 100) / 100;
    total += ms;
  }
  per.total = Math.round((total / operations) * 100) / 100;
  return per;
}

/** `server 12.3 + worker 20.1 + … = 37 ms`: CPU per operation, by process, and its total. */
export function describeCpu(cpu: CpuByProcess): string {
  const parts = Object.entries(cpu).filter(([name]) => name !== 'total');
  return `${parts.map(([name, ms]) => `${name} ${ms}`).join(' + ')} = ${cpu.total} ms`;
}

/** a ÷ b for the total and for each process both counted, to 0.01; undefined where b has no total. */
export function cpuRatio(a: CpuByProcess, b: CpuByProcess): CpuByProcess | undefined {
  if (!(b.total > 0) || a.total === undefined) return undefined;
  return Object.fromEntries(
    Object.keys(a)
      .filter((name) => b[name] > 0)
      .map((name) => [name, Math.round((a[name] / b[name]) * 100) / 100]),
  );
}
