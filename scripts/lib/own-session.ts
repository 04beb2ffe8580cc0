import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/**
 * Spawns a child in a session (and so a process group) of its own: `setsid`, which Node.js does for `detached`.
 *
 * Why the harness needs it: a process that is stopped (SIGSTOP, as `worker-pause` does) when its process group
 * becomes orphaned is hung up by the kernel (SIGHUP, then SIGCONT; POSIX's rule for orphaned groups with stopped
 * members). A group becomes orphaned when its last member with a parent elsewhere in the session exits. That
 * happens when the shell that started `npm run chaos` in the background exits during a pause (a `nohup … &` from a
 * script, a CI step), and the paused worker then dies of a SIGHUP nobody sent (#0 of a first attempt at the
 * 1000-fault run, most likely #6 of the 400-fault run). In a session of its own the child's group has no member
 * outside it that could leave, so the rule never applies to it. The child still ends with its parent where it
 * listens for that (workers do, through their IPC channel), and it no longer gets the terminal's Ctrl-C: the
 * harness stops it itself.
 */
export function spawnInOwnSession(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return spawn(command, args, { ...options, detached: true });
}
