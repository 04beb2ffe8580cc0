/**
 * An exclusive lock between processes on one machine: a file created with `wx` (it exists, or this process made it),
 * holding its holder's pid, a token and the time it was taken. Others wait for it, polling; a lock whose holder has
 * died, or that is older than any holder should hold it, is stale and taken over. Synchronous, for scripts and test
 * set-ups that must not go on before the locked work is done.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface FileLockOptions {
  /** How long to wait while another process holds the lock before giving up with an error naming the holder. */
  timeoutMs: number;
  /** A lock taken longer ago than this counts as stale even when its pid is alive (a hung holder, a reused pid). */
  staleMs: number;
  /** How often to look again while another holds it; 100 ms by default. */
  pollMs?: number;
}

interface LockHolder {
  pid: number;
  token: string;
  at: number;
}

/** Runs `fn` while holding the lock `file`, waiting for another holder first; releases it however `fn` ends. */
export function withFileLock<T>(file: string, fn: () => T, options: FileLockOptions): T {
  const token = acquire(file, options);
  try {
    return fn();
  } finally {
    removeIfHeldBy(file, token);
  }
}

function acquire(file: string, { timeoutMs, staleMs, pollMs = 100 }: FileLockOptions): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const token = `${process.pid}-${randomUUID()}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (tryCreate(file, { pid: process.pid, token, at: Date.now() })) return token;
    const holder = readHolder(file);
    if (holder === 'gone') continue;
    if (isStale(holder, file, staleMs)) {
      if (holder !== 'unreadable') removeIfHeldBy(file, holder.token);
      else unlinkQuietly(file);
      continue;
    }
    if (Date.now() >= deadline) {
      const who = holder === 'unreadable' ? 'a process' : `pid ${holder.pid}`;
      throw new Error(`${file}: still held by ${who} after ${timeoutMs} ms (remove the file if no one holds it)`);
    }
    sleep(pollMs);
  }
}

/** Creates the lock file with `holder` in it; false when it exists already. */
function tryCreate(file: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(holder));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Who holds the lock: `gone` when it was just released, `unreadable` while its holder is still writing it. */
function readHolder(file: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  try {
    const holder = JSON.parse(text) as LockHolder;
    return typeof holder.pid === 'number' && typeof holder.token === 'string' ? holder : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function isStale(holder: LockHolder | 'unreadable', file: string, staleMs: number): boolean {
  if (holder === 'unreadable') {
    // Between `wx` and the write is a moment; a file that stays empty belongs to a holder that died in it.
    try {
      return Date.now() - statSync(file).mtimeMs > Math.min(staleMs, 5_000);
    } catch {
      return false;
    }
  }
  return !isAlive(holder.pid) || Date.now() - holder.at > staleMs;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the lock only while it is still the one `token` took: never a lock another process has taken since. */
function removeIfHeldBy(file: string, token: string): void {
  const holder = readHolder(file);
  if (typeof holder === 'object' && holder.token === token) unlinkQuietly(file);
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
