import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  countCpu,
  cpuPerOperation,
  cpuRatio,
  describeCpu,
  processCpuMs,
  statCpuMs,
} from '../../scripts/bench/process-cpu';

/** A /proc/<pid>/stat line with the given name and utime/stime ticks (fields 14 and 15). */
const stat = (name: string, utime: number, stime: number) =>
  `4242 (${name}) S 1 4242 4242 0 -1 4194560 900 0 0 0 ${utime} ${stime} 0 0 20 0 9 0 123 456 789`;

/** Burns this process's own CPU until process.cpuUsage says `ms` more were used. */
function burn(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  while (process.cpuUsage(start).user + process.cpuUsage(start).system < ms * 1000) x += Math.sqrt(x + 1);
  assert.ok(x > 0);
}

describe("bench: a process's CPU time from /proc", () => {
  it('reads utime + stime in ticks of 10 ms, whatever the command name holds', () => {
    assert.equal(statCpuMs(stat('node', 150, 50)), 2000);
    assert.equal(statCpuMs(stat('a b) S 1 2 3 (c', 7, 3)), 100, 'fields counted from the last parenthesis');
    assert.equal(statCpuMs('not a stat line'), undefined);
    assert.equal(statCpuMs('1 (x) S 1 2'), undefined, 'too few fields');
  });

  it(
    "follows this process's own CPU as process.cpuUsage counts it",
    { skip: process.platform !== 'linux' },
    async () => {
      const before = await processCpuMs(process.pid);
      assert.notEqual(before, undefined);
      const counting = await countCpu({ self: process.pid, twice: [process.pid, process.pid] });
      const usageBefore = process.cpuUsage();
      burn(300);
      const usage = process.cpuUsage(usageBefore);
      const { self, twice } = await counting.stop();
      const expected = (usage.user + usage.system) / 1000;
      assert.ok(
        self !== undefined && Math.abs(self - expected) <= 30,
        `/proc counted ${self} ms, cpuUsage ${expected}`,
      );
      assert.ok(twice !== undefined && Math.abs(twice - 2 * self) <= 20, `a name's processes are summed: ${twice}`);
    },
  );

  it(
    'leaves out a process that is gone rather than count it as zero',
    { skip: process.platform !== 'linux' },
    async () => {
      const gone = spawnSync(process.execPath, ['-e', '0']).pid;
      assert.equal(await processCpuMs(gone), undefined);
      const counting = await countCpu({ gone, none: undefined, self: process.pid, pool: [process.pid, gone] });
      assert.deepEqual(
        Object.keys(await counting.stop()),
        ['self'],
        'a pool with one process gone is not counted short',
      );
    },
  );

  it('divides by the operations and sums the processes', () => {
    assert.deepEqual(cpuPerOperation({ server: 1000, worker: 3000 }, 400), { server: 2.5, worker: 7.5, total: 10 });
    assert.deepEqual(cpuPerOperation({ server: 1 }, 0), {});
  });

  it('prints a figure by process with its sum, and sets two against each other where both counted', () => {
    assert.equal(describeCpu({ server: 12.3, worker: 20.1, total: 32.4 }), 'server 12.3 + worker 20.1 = 32.4 ms');
    assert.deepEqual(cpuRatio({ server: 3, workers: 6, bench: 1, total: 10 }, { server: 4, bench: 4, total: 8 }), {
      server: 0.75,
      bench: 0.25,
      total: 1.25,
    });
    assert.equal(cpuRatio({ total: 1 }, { total: 0 }), undefined);
  });
});
