import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { commandsListed, walkHelp, type HelpAnswer } from '../support/command-tree';

const ROOT = path.resolve(__dirname, '..', '..');

/** `retrysafe …` from the sources, in a folder with no stack and no settings, as a fresh project is. */
function retrysafe(argv: string[]): Promise<HelpAnswer> {
  return new Promise((resolve) => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(RETRYSAFE_|TEMPORAL_)/.test(name)),
    );
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'cli/main.ts'), ...argv],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ argv, status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('retrysafe --help', () => {
  it('reads the commands listed under a help text’s Commands: heading', () => {
    const help =
      'Usage: x\n\nCommands:\n  dev [options]  start\n    wrapped\n  ops-x  more\n  help [command]  h\n\nRun …';
    assert.deepEqual(commandsListed(help), ['dev', 'ops-x']);
    assert.deepEqual(commandsListed('Usage: x\n  not a list'), []);
  });

  it('answers --help with exit 0 on stdout for every command and subcommand', { timeout: 300_000 }, async () => {
    const answers = await walkHelp(retrysafe);
    const walked = answers.map((a) => a.argv.slice(0, -1).join(' ')).sort();
    for (const command of [
      'dev',
      'ops',
      'ops show',
      'ops operators',
      'mcp',
      'mcp stdio',
      'mcp http',
      'approvals',
      'webhooks',
    ])
      assert.ok(walked.includes(command), `${command} is in the tree: ${walked.join(', ')}`);
    assert.ok(walked.length >= 20, `${walked.length} commands walked`);
    for (const a of answers) {
      const line = `retrysafe ${a.argv.join(' ')}`;
      assert.equal(a.status, 0, `${line}: exit ${a.status}\n${a.stderr}`);
      assert.match(a.stdout, /^Usage: retrysafe /, `${line} prints its usage on stdout`);
      const own = a.argv.slice(0, -1).join(' ');
      assert.ok(
        a.stdout.startsWith(`Usage: retrysafe ${own}`.trimEnd()),
        `${line} prints its own usage: ${a.stdout.split('\n')[0]}`,
      );
      assert.doesNotMatch(
        a.stdout,
        /npm start|npm run |\.data\//,
        `${line} speaks to someone who installed the package`,
      );
    }
  });

  it('names an unknown subcommand in one line and exits 2', async () => {
    for (const command of ['mcp', 'approvals']) {
      const answer = await retrysafe([command, 'serv']);
      assert.equal(answer.status, 2, answer.stderr);
      assert.match(answer.stderr, /^serv: unknown command; commands are /m);
    }
  });

  it('starts no webhook router on a stray argument (exit 2) or without signing secrets (exit 1), naming the cause', async () => {
    const stray = await retrysafe(['webhooks', 'serve']);
    assert.equal(stray.status, 2, stray.stderr);
    assert.equal(stray.stderr, 'retrysafe webhooks: serve: unexpected argument; see retrysafe webhooks --help\n');
    const port = await retrysafe(['webhooks', '--port', '42000x']);
    assert.equal(port.status, 2, port.stderr);
    assert.match(port.stderr, /^retrysafe webhooks: --port: must be a port number from 0 to 65535, got "42000x"$/m);
    const host = await retrysafe(['webhooks', '--host', ' ']);
    assert.equal(host.status, 2, host.stderr);
    assert.match(host.stderr, /^retrysafe webhooks: --host: must be an address/m);
    const unsigned = await retrysafe(['webhooks', '--port', '0']);
    assert.equal(unsigned.status, 1, unsigned.stderr);
    assert.match(unsigned.stderr, /^retrysafe webhooks: RETRYSAFE_WEBHOOK_SECRETS is not set/m);
  });
});
