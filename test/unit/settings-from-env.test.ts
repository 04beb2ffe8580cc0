import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isSettingsError, retrysafeSettingsFromEnv } from 'retrysafe/worker';
import { whereSettingsComeFrom } from '../../workers/settings-from-env';

describe('a worker started without settings', () => {
  it('names the missing setting and says where settings come from', async () => {
    const err = await retrysafeSettingsFromEnv({}).then(
      () => assert.fail('settings without a ledger'),
      (e: unknown) => e as Error,
    );
    assert.ok(isSettingsError(err), String(err));
    const [first, hint] = err.message.split('\n');
    assert.match(first, /^RETRYSAFE_LEDGER/);
    assert.match(hint, /node --env-file=\.retrysafe\/dev\.env /);
  });

  it('says nothing more when some of the settings are there: the message names the one that is wrong', async () => {
    const err = await retrysafeSettingsFromEnv({ RETRYSAFE_TASK_QUEUE: 'q' }).then(
      () => assert.fail('settings without a ledger'),
      (e: unknown) => e as Error,
    );
    assert.ok(isSettingsError(err));
    assert.doesNotMatch(err.message, /--env-file/);
  });

  it('points at the file retrysafe dev wrote when the project has one, else at retrysafe dev', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-settings-'));
    try {
      assert.match(whereSettingsComeFrom(dir), /run `npx retrysafe dev` in the project folder/);
      await mkdir(path.join(dir, '.retrysafe'));
      await writeFile(path.join(dir, '.retrysafe', 'dev.env'), 'RETRYSAFE_LEDGER=sqlite:x\n');
      assert.match(
        whereSettingsComeFrom(dir),
        /load the ones `retrysafe dev` wrote, node --env-file=\.retrysafe\/dev\.env/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
