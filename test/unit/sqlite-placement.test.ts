import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mountOf, sharedFilesystemProblem } from '../../ledger/sqlite-placement';

const MOUNTS = [
  'overlay / overlay rw,relatime 0 0',
  'tmpfs /tmp tmpfs rw 0 0',
  '10.0.0.5:/exports/ledger /mnt/shared nfs4 rw,vers=4.2 0 0',
  '//fs/team /mnt/smb\\040team cifs rw 0 0',
  '/dev/sda1 /mnt/shared/local-cache ext4 rw 0 0',
].join('\n');

describe('where a SQLite ledger may live', () => {
  it('finds the longest mount point holding the file, with /proc/mounts escapes undone', () => {
    assert.deepEqual(mountOf('/mnt/shared/ledger.sqlite', MOUNTS), { mountPoint: '/mnt/shared', fsType: 'nfs4' });
    assert.deepEqual(mountOf('/mnt/shared/local-cache/l.sqlite', MOUNTS), {
      mountPoint: '/mnt/shared/local-cache',
      fsType: 'ext4',
    });
    assert.deepEqual(mountOf('/mnt/smb team/l.sqlite', MOUNTS), { mountPoint: '/mnt/smb team', fsType: 'cifs' });
    assert.deepEqual(mountOf('/mnt/sharedness/l.sqlite', MOUNTS), { mountPoint: '/', fsType: 'overlay' });
  });

  it('refuses a file on a network filesystem, naming it and PostgreSQL; a local file, memory or no /proc pass', () => {
    const problem = sharedFilesystemProblem('/mnt/shared/ledger.sqlite', () => MOUNTS);
    assert.match(problem ?? '', /nfs4 filesystem \(mounted at \/mnt\/shared\)/);
    assert.match(problem ?? '', /RETRYSAFE_LEDGER=postgres:/);
    assert.match(sharedFilesystemProblem('/mnt/smb team/l.sqlite', () => MOUNTS) ?? '', /cifs/);
    assert.equal(
      sharedFilesystemProblem('/tmp/ledger.sqlite', () => MOUNTS),
      undefined,
    );
    assert.equal(
      sharedFilesystemProblem('/mnt/shared/local-cache/l.sqlite', () => MOUNTS),
      undefined,
    );
    assert.equal(
      sharedFilesystemProblem(':memory:', () => MOUNTS),
      undefined,
    );
    assert.equal(
      sharedFilesystemProblem('/mnt/shared/ledger.sqlite', () => undefined),
      undefined,
    );
  });
});
