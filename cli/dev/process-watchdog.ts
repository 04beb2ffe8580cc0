import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';

/** How long a watched server gets between the polite signal and SIGKILL. */
export const WATCHDOG_GRACE_MS = 10_000;

// Runs in its own small node process holding the read end of a pipe from us. The pipe closes however we die,
// even by SIGKILL, and then the watchdog stops the server (the signal given, SIGKILL after the grace period) and
// deletes the folders it was given.
const WATCHDOG_JS = `
const fs = require('node:fs');
const pid = Number(process.argv[1]);
const signal = process.argv[2];
const folders = JSON.parse(process.argv[3]);
const alive = () => { if (pid <= 0) return false; try { process.kill(pid, 0); return true; } catch { return false; } };
const done = () => {
  for (const folder of folders) { try { fs.rmSync(folder, { recursive: true, force: true }); } catch {} }
  process.exit(0);
};
const stopServer = () => {
  if (!alive()) done();
  process.kill(pid, signal);
  setInterval(() => { if (!alive()) done(); }, 200);
  setTimeout(() => { if (alive()) process.kill(pid, 'SIGKILL'); setTimeout(done, 500); }, ${WATCHDOG_GRACE_MS});
};
process.stdin.on('data', () => undefined).on('end', stopServer).on('error', stopServer);
`;

/**
 * A detached process that stops `serverPid` when this process dies, whether by exit, signal or SIGKILL, so that a
 * killed test runner or launcher does not leave servers holding ports and folders; once the server is gone it
 * deletes `remove`. A pid of 0 watches no process, only folders. Kill the returned process (SIGKILL) once the
 * server has exited and the folders are dealt with.
 */
export function spawnWatchdog(
  serverPid: number,
  signal: NodeJS.Signals = 'SIGTERM',
  opts: { remove?: string[] } = {},
): ChildProcess {
  const args = ['-e', WATCHDOG_JS, String(serverPid), signal, JSON.stringify(opts.remove ?? [])];
  const watchdog = spawn(process.execPath, args, {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  // Neither the process nor its pipe may keep our event loop alive.
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  return watchdog;
}

/**
 * Stops a throw-away server this process started: SIGTERM, SIGKILL after `graceMs`, then its folder (if it has one),
 * then its watchdog (which has nothing left to do). `exited` settles when the child is gone.
 */
export async function stopThrowawayServer(
  child: ChildProcess,
  exited: Promise<void>,
  opts: { dir?: string; watchdog?: ChildProcess; graceMs?: number },
): Promise<void> {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.graceMs ?? 5_000);
    await exited;
    clearTimeout(timer);
  }
  if (opts.dir !== undefined) await rm(opts.dir, { recursive: true, force: true });
  opts.watchdog?.kill('SIGKILL');
}
