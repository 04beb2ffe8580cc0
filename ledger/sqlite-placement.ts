import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a SQLite ledger may live. SQLite's locks (and the shared memory WAL mode needs) hold between processes of one
 * machine; on a network filesystem they do not hold between machines, so two hosts sharing one file could both take
 * one action's row. The ledger is the action's record, so a worker refuses such a file and names PostgreSQL instead.
 */

/** Filesystem types whose files other machines may open at the same time (Linux's names in /proc/mounts). */
export const NETWORK_FILESYSTEMS: readonly string[] = [
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'smbfs',
  '9p',
  'ceph',
  'glusterfs',
  'lustre',
  'gpfs',
  'ocfs2',
  'gfs2',
  'beegfs',
  'fuse.sshfs',
  'fuse.s3fs',
  'fuse.gcsfuse',
  'fuse.rclone',
  'fuse.juicefs',
  'afs',
];

/** The mount a path lives on, from /proc/mounts' text: the longest mount point that contains it. */
export function mountOf(file: string, mounts: string): { mountPoint: string; fsType: string } | undefined {
  const target = path.resolve(file);
  let best: { mountPoint: string; fsType: string } | undefined;
  for (const line of mounts.split('\n')) {
    const [, rawPoint, fsType] = line.split(' ');
    if (!rawPoint || !fsType) continue;
    // /proc/mounts escapes spaces, tabs, newlines and backslashes as octal.
    const mountPoint = rawPoint.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
    const inside = mountPoint === '/' || target === mountPoint || target.startsWith(`${mountPoint}/`);
    if (inside && (!best || mountPoint.length >= best.mountPoint.length)) best = { mountPoint, fsType };
  }
  return best;
}

/**
 * Why a SQLite ledger must not be opened at `file` (it lies on a network filesystem), or undefined when it may. Reads
 * /proc/mounts where there is one (Linux); elsewhere the file is taken to be local.
 */
export function sharedFilesystemProblem(
  file: string,
  readMounts: () => string | undefined = procMounts,
): string | undefined {
  if (file === ':memory:') return undefined;
  const mounts = readMounts();
  if (mounts === undefined) return undefined;
  const mount = mountOf(file, mounts);
  if (!mount || !NETWORK_FILESYSTEMS.includes(mount.fsType)) return undefined;
  return (
    `the SQLite ledger ${file} is on a ${mount.fsType} filesystem (mounted at ${mount.mountPoint}), which other machines ` +
    'share; SQLite cannot lock it between them, so two hosts could both take one action. Keep the SQLite ledger on a ' +
    'local disk of the one machine its workers run on, or use PostgreSQL (RETRYSAFE_LEDGER=postgres://…) for workers ' +
    'on several hosts'
  );
}

function procMounts(): string | undefined {
  try {
    return readFileSync('/proc/mounts', 'utf8');
  } catch {
    return undefined;
  }
}
