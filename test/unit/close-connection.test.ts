import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const MODULE = path.resolve(__dirname, '..', '..', 'scripts', 'lib', 'close-connection.ts');

/** Runs `body` in a fresh Node process with closeConnection imported, and answers its exit and output. */
function runWith(body: string) {
  const script = `
    const { closeConnection, CLOSED_CHANNEL_MESSAGE } = require(${JSON.stringify(MODULE)});
    let closed = false;
    ${body}
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('closeConnection: a retried call that fires into the closed channel', () => {
  it('is dropped within the window after the close, and the connection is closed', () => {
    const run = runWith(`
      closeConnection({ close: async () => { closed = true; } }, 1_000).then(() => {
        // As the SDK's retry interceptor does: the next attempt starts from a timer, and throws there.
        setTimeout(() => { throw new Error(CLOSED_CHANNEL_MESSAGE); }, 50);
        setTimeout(() => { console.log('alive, closed=' + closed); }, 200);
      });
    `);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /alive, closed=true/);
  });

  it('still ends the process for any other uncaught exception', () => {
    const run = runWith(`
      closeConnection({ close: async () => undefined }, 1_000).then(() => {
        setTimeout(() => { throw new Error('a real bug'); }, 50);
        setTimeout(() => { console.log('alive'); }, 200);
      });
    `);
    assert.notEqual(run.status, 0);
    assert.doesNotMatch(run.stdout, /alive/);
    assert.match(run.stderr, /a real bug/);
  });

  it('drops nothing once the window has passed', () => {
    const run = runWith(`
      closeConnection({ close: async () => undefined }, 50).then(() => {
        setTimeout(() => { throw new Error(CLOSED_CHANNEL_MESSAGE); }, 200);
        setTimeout(() => { console.log('alive'); }, 400);
      });
    `);
    assert.notEqual(run.status, 0);
    assert.doesNotMatch(run.stdout, /alive/);
  });
});
