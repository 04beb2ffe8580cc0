import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { childLog } from '../../cli/dev/child-log';
import { waitUntil } from '../support/wait';

/**
 * How long to keep listening for uncaught exceptions after `run`. A fixed wait on purpose: most cases check that
 * nothing is thrown, and no event marks "a stream error would have been emitted by now"; a stream's error comes on
 * a later tick, well inside this.
 */
const LATE_ERROR_WINDOW_MS = 50;

/** Resolves with the uncaught exceptions seen while `run` and a few ticks after it ran. */
async function uncaughtDuring(run: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const listeners = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const catcher = (err: Error) => seen.push(err);
  process.on('uncaughtException', catcher);
  try {
    await run();
    await sleep(LATE_ERROR_WINDOW_MS);
  } finally {
    process.removeListener('uncaughtException', catcher);
    for (const l of listeners) process.on('uncaughtException', l);
  }
  return seen;
}

describe('childLog', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-child-log-'));
  after(() => rm(dir, { recursive: true, force: true }));

  it('a plain write stream throws on a chunk written after its end: the failure childLog exists for', async () => {
    const stream = createWriteStream(path.join(dir, 'plain.log'));
    const seen = await uncaughtDuring(async () => {
      stream.end();
      stream.write('late');
    });
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as NodeJS.ErrnoException).code, 'ERR_STREAM_WRITE_AFTER_END');
  });

  it('keeps what came before the end, drops what came after, and throws nothing', async () => {
    const file = path.join(dir, 'late.log');
    const log = childLog(file);
    const seen = await uncaughtDuring(async () => {
      log.write('first\n');
      const closed = log.end();
      log.write('late\n');
      await closed;
      log.write('later still\n');
    });
    assert.deepEqual(seen, []);
    assert.equal(await readFile(file, 'utf8'), 'first\n');
    assert.equal(log.dropped, 2);
    assert.equal(log.error, undefined);
  });

  it('keeps a file error for whoever asks instead of throwing it, and still ends', async () => {
    const log = childLog(path.join(dir, 'no-such-folder', 'x.log'));
    const seen = await uncaughtDuring(async () => {
      log.write('lost\n');
      // The open fails on a later tick: write again once the log holds that error, so the write after it is tested.
      await waitUntil('the log to keep the ENOENT of its missing folder', () => log.error !== undefined, 5_000, 5);
      log.write('lost too\n');
      await log.end();
    });
    assert.deepEqual(seen, []);
    assert.equal((log.error as NodeJS.ErrnoException | undefined)?.code, 'ENOENT');
  });

  it('ends once, however often it is asked', async () => {
    const log = childLog(path.join(dir, 'twice.log'));
    log.write('a');
    await Promise.all([log.end(), log.end()]);
    await log.end();
    assert.equal(await readFile(path.join(dir, 'twice.log'), 'utf8'), 'a');
  });
});
