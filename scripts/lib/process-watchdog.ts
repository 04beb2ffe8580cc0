import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/** How long a watched server gets between the polite signal and SIGKILL. */
export const WATCHDOG_GRACE_MS = 10_000;

// Runs in its own small node process holding the read end of a pipe from us. The pipe closes however we die,
// even by SIGKILL, and then the watchdog stops the server (the signal given, SIGKILL after the grace period).
const WATCHDOG_JS = `
const pid = Number(process.argv[1]);
const signal = process.argv[2];
const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
const stopServer = () => {
  if (!alive()) process.exit(0);
  process.kill(pid, signal);
  setInterval(() => { if (!alive()) process.exit(0); }, 200);
  setTimeout(() => { if (alive()) process.kill(pid, 'SIGKILL'); process.exit(0); }, ${WATCHDOG_GRACE_MS});
};
process.stdin.on('data', () => undefined).on('end', stopServer).on('error', stopServer);
`;

/**
 * A detached process that stops `serverPid` when this process dies, whether by exit, signal or SIGKILL, so that a
 * killed test runner or launcher does not leave servers holding ports and folders. Kill the returned process
 * (SIGKILL) once the server has exited on its own.
 */
export function spawnWatchdog(serverPid: number, signal: NodeJS.Signals = 'SIGTERM'): ChildProcess {
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG_JS, String(serverPid), signal], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  // Neither the process nor its pipe may keep our event loop alive.
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  return watchdog;
}
